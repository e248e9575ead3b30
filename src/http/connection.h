// One HTTP connection of the listener (server.h), the HTTP thread's only.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "http/request_parser.h"
#include "http/route.h"
#include "reactor/reactor.h"
#include "session/transport.h"

namespace tw::auth {
struct Login;
}

namespace tw::http {

class Server;

struct Connection final : reactor::IoHandler {
  Connection(Server& s, std::unique_ptr<session::Transport> t, std::string p, RequestLimits limits)
      : server(s), transport(std::move(t)), peer(std::move(p)), parser(limits) {}
  void on_io(uint32_t events) override;

  Server& server;
  std::unique_ptr<session::Transport> transport;
  std::string peer;
  bool tls = false;  // the listener's scheme, for the Origin check
  bool handshaken = false;
  RequestParser parser;
  std::string in;         // bytes read, not yet parsed (pipelined requests wait here)
  std::string out;        // response bytes not yet on the socket
  size_t out_sent = 0;    // of out
  bool close_after_flush = false;
  bool continue_sent = false;  // "100 Continue" for the current request (Expect: 100-continue)
  bool closed = false;
  uint32_t events = 0;    // what epoll watches for it now
  uint64_t deadline_ns = 0;  // handshake, request or idle deadline
  const char* deadline_reason = "";
  // A server-sent event stream: the handler's source and its pace.
  std::function<std::optional<std::string>()> next_event;
  uint64_t event_interval_ns = 0;
  uint64_t next_event_ns = 0;
  // The last Authorization header that passed, whom it named, and the users
  // file generation it passed under: keep-alive requests with the same
  // credentials are not verified again (argon2 is slow by design) until a
  // reload, when they are.
  std::string authorization;
  std::string user;
  bool admin = false;
  uint64_t auth_generation = 0;
  // The current request's password check: while set, the connection is
  // parked (not read, not served) and Server::poll_logins waits for it.
  std::shared_ptr<auth::Login> login;
  std::string login_authorization;
  uint64_t login_generation = 0;
  uint64_t login_deadline_ns = 0;
  // The finished check's refusal (401, 503), for the request that waited for it.
  std::optional<Response> auth_refusal;
  // A WebSocket upgrade answered with 101: once that is on the wire the
  // connection goes to the route (Server::hand_off).
  const struct WebSocketRoute* upgrade = nullptr;
  Request upgrade_request;
};

}  // namespace tw::http
