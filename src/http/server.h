// Server: the HTTP/1.1 listener, on a thread of its own ("tw-http", nice
// +10), never on a loop thread: its handlers may block (they read the loops'
// snapshots or wait for a loop's answer, and a Basic login waits for the
// argon2 verifier), and a Prometheus scrape must not delay market data
// (docs/ARCHITECTURE.md, "The HTTP thread").
//
// One reactor (src/reactor, its own, on this thread) serves every HTTP
// listener's connections: TLS handshakes
// (non-blocking, on this thread), requests parsed with llhttp
// (RequestParser), keep-alive and pipelining in order, server-sent events
// (Response::next_event) and the bounds: request line and headers (431),
// body (413), a request must be whole within request_timeout_ms of its first
// byte (408), a keep-alive connection idle for idle_timeout_ms is closed,
// and past max_connections a new connection gets 503. Malformed input gets
// 400 and closes that connection only.
//
// WebSocket upgrades on a registered path (add_websocket) never reach a
// route: the listener answers the handshake (101), wraps the connection in
// a websocket::Transport and hands it to the route's adopt callback, which
// gives it to a loop (tier::Broker); from then on the listener forgets it.
//
// Basic credentials are checked by the Authority's verifier, never on this
// thread: a request that needs a check parks its connection (not read, its
// pipelined requests wait in order) and is answered when the Login is done;
// the others are served meanwhile. A connection remembers the credentials
// that passed and the users file generation they passed under: after a
// reload they are checked again, so every request is authorised by the
// policy in force when it arrives.
//
// Origin (a browser's cross-site request): state-changing requests and
// WebSocket upgrades that carry an Origin must come from the listener's own
// origin (its Host, its scheme) or one of allowed_origins; others get 403.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "auth/authority.h"
#include "http/request_parser.h"
#include "http/route.h"
#include "reactor/reactor.h"
#include "session/tls_context.h"
#include "session/transport.h"
#include "websocket/transport.h"

namespace tw::http {

struct ServerSettings {
  RequestLimits limits;
  uint32_t request_timeout_ms = 10'000;   // a request must be whole this long after its first byte
  uint32_t idle_timeout_ms = 60'000;      // a keep-alive connection without a request is closed
  uint32_t handshake_timeout_ms = 2'000;  // TLS
  uint32_t max_connections = 1'024;
  uint64_t max_websocket_message = 1u << 20;
  // Origins besides the listener's own whose browsers may change state (POST,
  // PUT, DELETE) or open a WebSocket: "https://console.example.com", or "*" for any.
  std::vector<std::string> allowed_origins;
};

// A path that switches to WebSocket (RFC 6455): the client must offer
// `subprotocol` (when set), and after the 101 its connection leaves the
// listener through `adopt`, wrapped in a websocket::Transport with `framing`.
struct WebSocketRoute {
  std::string subprotocol;
  websocket::Framing framing = websocket::Framing::BinaryStream;
  // On the HTTP thread: the connection is the callee's from here on.
  std::function<void(std::unique_ptr<session::Transport> transport, const Request& request)> adopt;
};

// A socket the listener accepts on; the caller owns the fd and the TLS context (null: plain).
struct ListenSocket {
  int fd = -1;
  session::TlsContext* tls = nullptr;
  std::string name;  // "http tcp://127.0.0.1:9401", for the log
};

// What the listener did, counted on its thread, readable from any thread
// (relaxed atomics, once per connection or request, never per market-data message).
struct ServerStats {
  std::atomic<uint64_t> connections_accepted{0};
  std::atomic<uint64_t> connections_refused{0};  // past max_connections (503)
  std::atomic<uint64_t> requests{0};             // answered, whatever the status
  std::atomic<uint64_t> bad_requests{0};         // refused by the parser: 400, 413, 431
  std::atomic<uint64_t> timeouts{0};             // 408
  std::atomic<uint64_t> auth_failures{0};        // 401 for credentials that were given
  std::atomic<uint64_t> websocket_upgrades{0};   // handed to a loop
  std::atomic<uint64_t> origin_refused{0};       // 403: a foreign Origin on a write or an upgrade
  std::atomic<uint64_t> logins{0};               // Basic credentials sent to the verifier
};

struct Connection;

class Server {
 public:
  // `authority` null: authentication off, every request is admin.
  Server(ServerSettings settings, Routes routes, auth::Authority* authority);
  ~Server();  // stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Before start().
  void add_listener(ListenSocket socket);
  void add_websocket(std::string path, WebSocketRoute route);
  void start();
  // Any thread but a handler's: closes every connection and joins the thread.
  void stop();
  // Any thread, and async-signal-safe (SIGHUP): every TLS listener re-reads
  // its certificate on the HTTP thread; open connections keep theirs.
  void request_tls_reload();
  // Any thread: connections open now, and the counts so far.
  size_t connections() const { return open_.load(std::memory_order_relaxed); }
  const ServerStats& stats() const { return stats_; }

 private:
  friend struct Connection;  // its on_io is the server's
  void run();
  void accept_pending(const ListenSocket& socket);
  void on_io(Connection& c, uint32_t events);
  bool advance_handshake(Connection& c);
  void read_requests(Connection& c);
  void serve_pending(Connection& c);
  void expect_continue(Connection& c);
  void respond(Connection& c);
  void finish_request(Connection& c);
  // True when the request's credentials must go to the verifier first: the connection is parked.
  bool start_login(Connection& c, const Request& request);
  void poll_logins(uint64_t now_ns);
  void end_login(Connection& c);
  bool credentials_current(const Connection& c, std::string_view authorization) const;
  bool origin_allowed(const Connection& c, const Request& request) const;
  uint32_t wanted_events(const Connection& c) const;
  // A request on a WebSocket path: true when it was answered here (101 or a refusal).
  bool upgrade(Connection& c, Request& request);
  void hand_off(Connection& c);
  Response answer(Connection& c, Request& request);
  bool authenticate(Connection& c, Request& request, Response& refusal);
  void send(Connection& c, std::string bytes);
  void flush(Connection& c);
  void watch(Connection& c, uint32_t events);
  void tick(uint64_t now_ns);
  void next_event(Connection& c, uint64_t now_ns);
  void close(Connection& c, const char* why);
  void reap();
  void reload_tls();

  // Watches one listening socket.
  struct Acceptor final : reactor::IoHandler {
    Acceptor(Server& owner, ListenSocket socket) : owner(owner), socket(std::move(socket)) {}
    void on_io(uint32_t) override { owner.accept_pending(socket); }
    Server& owner;
    ListenSocket socket;
  };

  const ServerSettings settings_;
  const Routes routes_;
  auth::Authority* const authority_;
  reactor::Reactor reactor_;
  std::vector<std::unique_ptr<Acceptor>> acceptors_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> tls_reload_{false};
  std::atomic<size_t> open_{0};
  ServerStats stats_;
  std::unordered_map<int, std::unique_ptr<Connection>> connections_;  // by fd; the HTTP thread's only
  std::vector<int> closing_;  // fds to remove at the end of this turn
  size_t parked_ = 0;         // connections waiting for a password check
  std::vector<std::unique_ptr<Connection>> handed_off_;  // emptied at the end of this turn
  std::unordered_map<std::string, WebSocketRoute> websockets_;  // by path
};

}  // namespace tw::http
