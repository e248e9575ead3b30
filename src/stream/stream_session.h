// StreamSession: a browser on /stream (docs/stream.md). The HTTP listener
// answers the WebSocket upgrade and hands the connection to a loop, over a
// websocket::Transport in Framing::TextMessages (src/websocket): it reads
// the browser's frames (masking, fragments, ping, close, UTF-8) and gives
// this session each text message as one line, and each pong as an empty
// line; what this session writes are whole frames, passed through. From
// then on it is a session like any other (src/session): the same delivery
// policy (slow consumers, conflation per subscription), counters and
// entitlements as native and MQTT subscribers. The protocol: JSON requests
// (request.h), JSON image/update/status messages out (json_encoder.h).
//
// Who it is: the user the listener authenticated from the upgrade's HTTP
// Basic credentials; else the first message may be {"op":"login"} (the
// password is checked off the loop, as a native HELLO's); else the
// anonymous grants where the users file allows them; else the connection is
// refused. Authentication off: everything is allowed.
//
// Liveness: the broker pings every heartbeat_ms; a browser answers each
// ping with a pong by itself, so a page that only listens is never idle.
//   stream_session.cc  messages, the lifecycle, login, pings, the goodbye
//   requests.cc        subscribe and unsubscribe, the answers
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "session/session.h"
#include "stream/request.h"

namespace tw::stream {

class StreamSession final : public session::Session {
 public:
  // `user`: who the HTTP listener authenticated for the upgrade ("" = nobody).
  StreamSession(Env env, std::unique_ptr<session::Transport> transport, std::string peer, std::string_view user,
                uint64_t now_ns);

  // The largest request a browser may send, in bytes.
  static constexpr size_t kMaxRequest = 4096;

 protected:
  size_t parse(std::span<const uint8_t> in) override;
  size_t encode_goodbye(std::span<uint8_t> out, wire::Code code, std::string_view text) override;
  void on_open_tick(uint64_t now_ns) override;
  uint64_t open_tick_due_ns() const override;
  void on_login(std::shared_ptr<const auth::Grants> grants, std::string_view error) override;

 private:
  void handle_message(std::string_view text);
  // The first request of a connection that is not yet open (authentication on).
  void handle_first(const Request& request);
  void handle(const Request& request);
  // Bad input: counted, answered with an error message, closed.
  void refuse(wire::Code code, std::string_view text);
  // The connection is open: named after its user (or "browser"), closed when silent.
  void open_as(std::string_view name);

  // requests.cc
  void subscribe(const Request& request);
  void unsubscribe(const Request& request);
  void answer(const Request& request, wire::Code code, std::string_view text);

  std::optional<Request> login_;  // the login request whose password is being checked
  uint64_t heartbeat_ns_;
  uint64_t last_ping_ns_ = 0;
};

// The factory of /stream sessions, for the broker's protocol table (tier/protocols.cc).
session::SessionFactory session_factory();

}  // namespace tw::stream
