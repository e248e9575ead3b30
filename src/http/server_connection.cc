// The listener's per-connection work: handshake, reading and parsing
// requests, answering them in order, writing (server.h).
#include <sys/epoll.h>

#include <strings.h>

#include <algorithm>

#include "auth/authority.h"
#include "base/ascii.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/rate_limit.h"
#include "http/basic_auth.h"
#include "http/connection.h"
#include "http/response.h"
#include "http/server.h"
#include "io/socket.h"
#include "websocket/handshake.h"

namespace tw::http {

namespace {
constexpr size_t kReadChunk = 16u << 10;
// Output past this is not added to: the connection's requests wait in the socket.
constexpr size_t kMaxBufferedOutput = 1u << 20;
// A login waits for the argon2 verifier; past this the request gets 503.
constexpr uint64_t kLoginWaitNs = 10'000'000'000;

Response bad_credentials() {
  Response r = Response::text(401, "bad credentials\n");
  r.headers.emplace_back("WWW-Authenticate", "Basic realm=\"tickwire\", charset=\"UTF-8\"");
  return r;
}

// "host:port", lower-cased, with the scheme's default port when none is written.
std::string with_port(std::string_view authority, bool https) {
  std::string out = ascii::lower(authority);
  const size_t colon = out.rfind(':');
  const bool has_port = colon != std::string::npos && out.find(']', colon) == std::string::npos;
  if (!has_port) out += https ? ":443" : ":80";
  return out;
}

// GET, HEAD and OPTIONS only read; anything else may change state.
bool changes_state(std::string_view method) { return method != "GET" && method != "HEAD" && method != "OPTIONS"; }
}  // namespace

void Connection::on_io(uint32_t events) { server.on_io(*this, events); }

void Server::on_io(Connection& c, uint32_t events) {
  if (c.closed) return;
  if (c.login) {  // parked: not read until its password check is answered
    if ((events & (EPOLLHUP | EPOLLERR)) != 0) return close(c, "peer closed during its login");
    if ((events & EPOLLOUT) != 0) flush(c);
    return;
  }
  if (!c.handshaken && !advance_handshake(c)) return;
  if ((events & EPOLLOUT) != 0) {
    flush(c);
    if (!c.closed && c.out.empty() && !c.in.empty()) serve_pending(c);  // pipelined requests waited for room
  }
  if (!c.closed && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) read_requests(c);
}

// True once application bytes can flow.
bool Server::advance_handshake(Connection& c) {
  switch (c.transport->handshake()) {
    case session::Handshake::Done:
      c.handshaken = true;
      c.deadline_ns = monotonic_ns() + uint64_t{settings_.idle_timeout_ms} * 1'000'000;
      c.deadline_reason = "idle";
      watch(c, EPOLLIN);
      return true;
    case session::Handshake::WantRead:
      watch(c, EPOLLIN);
      return false;
    case session::Handshake::WantWrite:
      watch(c, EPOLLOUT);
      return false;
    case session::Handshake::Failed:
      TW_WARN_LIMITED("http %s closed: tls handshake failed: %s", c.peer.c_str(), c.transport->error_text().c_str());
      close(c, "tls handshake failed");
      return false;
  }
  return false;
}

void Server::read_requests(Connection& c) {
  char buffer[kReadChunk];
  // An event stream takes no more requests; reading only notices the close.
  while (!c.closed && (c.out.size() - c.out_sent) < kMaxBufferedOutput) {
    const session::ReadResult r = c.transport->read({reinterpret_cast<uint8_t*>(buffer), sizeof buffer});
    if (r.status == session::ReadStatus::Again) break;
    if (r.status != session::ReadStatus::Data) return close(c, "peer closed");
    if (c.next_event) continue;
    if (!c.parser.in_request() && c.in.empty()) {
      c.deadline_ns = monotonic_ns() + uint64_t{settings_.request_timeout_ms} * 1'000'000;
      c.deadline_reason = "request timeout";
    }
    c.in.append(buffer, r.bytes);
    serve_pending(c);
  }
}

// Parses and answers the requests in `in`, in order, while the output has room.
void Server::serve_pending(Connection& c) {
  while (!c.closed && !c.close_after_flush && !c.next_event && c.upgrade == nullptr && !c.in.empty() &&
         (c.out.size() - c.out_sent) < kMaxBufferedOutput) {
    const RequestParser::Outcome outcome = c.parser.feed(c.in);
    if (outcome.status == RequestParser::Status::NeedMore) {
      c.in.clear();
      expect_continue(c);
      return;
    }
    if (outcome.status == RequestParser::Status::Error) {
      TW_WARN_LIMITED("http %s: %d, %s", c.peer.c_str(), outcome.http_status, outcome.error.c_str());
      stats_.bad_requests.fetch_add(1, std::memory_order_relaxed);
      c.in.clear();
      c.close_after_flush = true;
      send(c, serialize(Response::text(outcome.http_status, outcome.error + "\n"), false));
      return;
    }
    c.in.erase(0, outcome.consumed);
    respond(c);
    if (c.login) return;  // parked: poll_logins answers it, then serves the rest
    finish_request(c);
  }
}

// The parser's request is answered: the next one may start.
void Server::finish_request(Connection& c) {
  c.parser.next();
  c.auth_refusal.reset();  // it was for this request alone
  c.continue_sent = false;
  if (!c.in.empty()) {
    c.deadline_ns = monotonic_ns() + uint64_t{settings_.request_timeout_ms} * 1'000'000;
    c.deadline_reason = "request timeout";
  }
}

// A client that waits for "100 Continue" before its body (curl does past
// 1 KiB) gets it once the headers are in, unless the body is refused by then.
void Server::expect_continue(Connection& c) {
  if (c.continue_sent || !c.parser.headers_complete()) return;
  const std::string_view expect = c.parser.request().header("expect");
  if (expect.size() != 12 || strncasecmp(expect.data(), "100-continue", 12) != 0) return;
  c.continue_sent = true;
  send(c, "HTTP/1.1 100 Continue\r\n\r\n");
}

void Server::respond(Connection& c) {
  Request& request = c.parser.request();
  request.peer = c.peer;
  const bool websocket = websockets_.contains(request.path);
  if ((websocket || changes_state(request.method)) && !origin_allowed(c, request)) {
    stats_.origin_refused.fetch_add(1, std::memory_order_relaxed);
    TW_WARN_LIMITED("http %s: 403, %s %s from the foreign origin %.*s", c.peer.c_str(), request.method.c_str(),
                    request.path.c_str(), static_cast<int>(request.header("origin").size()),
                    request.header("origin").data());
    stats_.requests.fetch_add(1, std::memory_order_relaxed);
    const bool keep_alive = !websocket && c.parser.keep_alive() && !c.parser.upgrade();
    if (!keep_alive) c.close_after_flush = true;
    send(c, serialize(Response::text(403, "cross-origin request refused: the Origin is neither this listener's "
                                          "nor in http_allowed_origins\n"),
                      keep_alive));
    return;
  }
  if (start_login(c, request)) return;
  if (upgrade(c, request)) return;
  const bool head = request.method == "HEAD";
  stats_.requests.fetch_add(1, std::memory_order_relaxed);
  Response response = answer(c, request);
  const bool keep_alive = c.parser.keep_alive() && !c.parser.upgrade();
  if (!keep_alive && !response.next_event) c.close_after_flush = true;
  if (response.next_event) {
    c.next_event = std::move(response.next_event);
    c.event_interval_ns = uint64_t{std::max<uint32_t>(response.event_interval_ms, 1)} * 1'000'000;
    c.next_event_ns = monotonic_ns() + c.event_interval_ns;
    response.next_event = [] { return std::optional<std::string>(); };  // serialize as a stream
    c.deadline_ns = 0;
  } else {
    c.deadline_ns = monotonic_ns() + uint64_t{settings_.idle_timeout_ms} * 1'000'000;
    c.deadline_reason = "idle";
  }
  send(c, serialize(response, keep_alive, head));
}

// WebSocket paths never reach a route. The protocol inside authenticates
// (MQTT's CONNECT), so the upgrade itself asks for no credentials; Basic
// credentials that are sent are checked and passed on in the Request.
bool Server::upgrade(Connection& c, Request& request) {
  auto it = websockets_.find(request.path);
  if (it == websockets_.end()) return false;
  const WebSocketRoute& route = it->second;
  websocket::UpgradeRequest asked{request.method, request.header("upgrade"), request.header("connection"),
                                  request.header("sec-websocket-version"), request.header("sec-websocket-key"),
                                  request.header("sec-websocket-protocol")};
  const websocket::HandshakeAnswer answer = websocket::answer_upgrade(asked, route.subprotocol);
  Response refusal;
  if (answer.status != 101) {
    TW_WARN_LIMITED("http %s: %d, websocket upgrade on %s refused: %s", c.peer.c_str(), answer.status,
                    request.path.c_str(), answer.error.c_str());
    refusal = Response::text(answer.status, answer.error + "\n");
    if (answer.status == 426) refusal.headers.emplace_back("Sec-WebSocket-Version", "13");
  } else if (!request.header("authorization").empty() && !authenticate(c, request, refusal)) {
    // refusal filled
  } else {
    c.upgrade = &route;
    c.upgrade_request = std::move(request);
    c.deadline_ns = monotonic_ns() + uint64_t{settings_.request_timeout_ms} * 1'000'000;
    send(c, websocket::switching_protocols(answer));
    return true;
  }
  c.close_after_flush = true;
  send(c, serialize(refusal, false));
  return true;
}

// The 101 is on the wire: the connection, with the client's first frames if
// it sent any already, leaves the listener for the route's loop.
void Server::hand_off(Connection& c) {
  const int fd = c.transport->fd();
  reactor_.remove(fd);
  websocket::Settings ws{c.upgrade->framing, settings_.max_websocket_message};
  auto transport = std::make_unique<websocket::Transport>(std::move(c.transport), ws, std::move(c.in));
  c.closed = true;
  TW_DEBUG("http %s: websocket on %s handed to a loop", c.peer.c_str(), c.upgrade_request.path.c_str());
  stats_.websocket_upgrades.fetch_add(1, std::memory_order_relaxed);
  c.upgrade->adopt(std::move(transport), c.upgrade_request);
  // The fd may be closed and reused at once: the entry goes now, the object at the end of the turn.
  auto it = connections_.find(fd);
  handed_off_.push_back(std::move(it->second));
  connections_.erase(it);
  open_.store(connections_.size(), std::memory_order_relaxed);
}

// The route's answer, after authentication; 404 and 405 when none matches.
Response Server::answer(Connection& c, Request& request) {
  Response refusal;
  if (!routes_.is_open(request.path) && !authenticate(c, request, refusal)) return refusal;
  const std::string_view method = request.method == "HEAD" ? std::string_view("GET") : request.method;
  const Handler* handler = routes_.find(method, request.path);
  if (handler == nullptr) {
    if (routes_.has_path(request.path)) return Response::text(405, "method " + request.method + " not allowed on " + request.path + "\n");
    return Response::text(404, "no such path: " + request.path + "\n");
  }
  try {
    return (*handler)(request);
  } catch (const std::exception& e) {
    TW_ERROR_LIMITED("http %s %s %s: handler failed: %s", c.peer.c_str(), request.method.c_str(), request.path.c_str(), e.what());
    return Response::text(500, "internal error\n");
  }
}

// Whether the connection's remembered credentials stand for this header
// under the users file in force now.
bool Server::credentials_current(const Connection& c, std::string_view authorization) const {
  return !c.authorization.empty() && authorization == c.authorization &&
         c.auth_generation == authority_->generation();
}

// Credentials that were not checked under the policy in force go to the
// verifier; the connection waits (parked) and the listener serves others.
bool Server::start_login(Connection& c, const Request& request) {
  if (authority_ == nullptr || c.auth_refusal || routes_.is_open(request.path)) return false;
  const std::string_view authorization = request.header("authorization");
  if (authorization.empty() || credentials_current(c, authorization)) return false;
  c.authorization.clear();  // another user, or a reload since: not trusted any more
  auto credentials = parse_basic(authorization);
  if (!credentials) {
    stats_.auth_failures.fetch_add(1, std::memory_order_relaxed);
    c.auth_refusal = bad_credentials();
    return false;
  }
  stats_.logins.fetch_add(1, std::memory_order_relaxed);
  c.login_generation = authority_->generation();  // a reload during the check: checked again next time
  c.login = authority_->authenticate(credentials->user, credentials->password, auth::address_of(c.peer));
  c.login_authorization.assign(authorization);
  c.login_deadline_ns = monotonic_ns() + kLoginWaitNs;
  c.deadline_ns = 0;  // the login's deadline stands for the request's
  ++parked_;
  watch(c, wanted_events(c));
  return true;
}

void Server::end_login(Connection& c) {
  c.login.reset();
  c.login_authorization.clear();
  --parked_;
}

// Each parked connection whose check is done (or overdue) gets its answer,
// then its pipelined requests are served in order.
void Server::poll_logins(uint64_t now_ns) {
  std::vector<Connection*> ready;
  for (auto& [fd, c] : connections_) {
    if (c->closed || !c->login) continue;
    if (c->login->done.load(std::memory_order_acquire) || now_ns >= c->login_deadline_ns) ready.push_back(c.get());
  }
  for (Connection* c : ready) {
    const auth::Login& login = *c->login;
    if (!login.done.load(std::memory_order_acquire)) {
      c->auth_refusal = Response::text(503, "authentication is busy, try again\n");
    } else if (login.busy) {  // refused unchecked: too many logins from its address (or in all)
      c->auth_refusal = Response::text(503, std::string(login.error) + "\n");
      c->auth_refusal->headers.emplace_back("Retry-After", "1");
    } else if (login.grants == nullptr) {
      TW_WARN_LIMITED("http %s: 401, login refused", c->peer.c_str());
      stats_.auth_failures.fetch_add(1, std::memory_order_relaxed);
      c->auth_refusal = bad_credentials();
    } else {
      c->authorization = c->login_authorization;
      c->user = login.grants->user();
      c->admin = login.grants->admin();
      c->auth_generation = c->login_generation;
    }
    end_login(*c);
    respond(*c);
    if (c->closed || c->login) continue;  // checked again: a reload came meanwhile
    finish_request(*c);
    watch(*c, wanted_events(*c));
    serve_pending(*c);
  }
}

// Fills request.user and admin from the connection's checked credentials (or
// anonymous); false with the refusal (401, 503) to send instead.
bool Server::authenticate(Connection& c, Request& request, Response& refusal) {
  if (authority_ == nullptr) {
    request.admin = true;
    return true;
  }
  if (c.auth_refusal) {
    refusal = std::move(*c.auth_refusal);
    c.auth_refusal.reset();
    return false;
  }
  const std::string_view authorization = request.header("authorization");
  if (authorization.empty()) {
    if (auto anonymous = authority_->for_anonymous(); anonymous != nullptr) {
      request.admin = anonymous->admin();
      return true;
    }
    refusal = Response::text(401, "credentials required\n");
    refusal.headers.emplace_back("WWW-Authenticate", "Basic realm=\"tickwire\", charset=\"UTF-8\"");
    return false;
  }
  if (!credentials_current(c, authorization)) {  // start_login parks such a request: not reached
    refusal = Response::text(503, "authentication is busy, try again\n");
    return false;
  }
  request.user = c.user;
  request.admin = c.admin;
  return true;
}

// Same-origin (the Origin's host and port are the Host header's), an allowed
// origin, or no Origin at all (not a browser). The Origin's scheme may be
// http or https: no other site can be served on the listener's own host and
// port (and paho sends "https://" even over ws://).
bool Server::origin_allowed(const Connection& c, const Request& request) const {
  const std::string_view origin = request.header("origin");
  if (origin.empty()) return true;
  const std::string asked = ascii::lower(origin);
  for (const std::string& allowed : settings_.allowed_origins) {
    if (allowed == "*" || ascii::equal_ignoring_case(allowed, asked)) return true;
  }
  const std::string_view host = request.header("host");
  if (host.empty()) return false;
  for (const bool https : {false, true}) {
    const std::string_view scheme = https ? "https://" : "http://";
    if (asked.starts_with(scheme)) {
      return with_port(std::string_view(asked).substr(scheme.size()), https) == with_port(host, c.tls);
    }
  }
  return false;
}

// Parked: no reading (its pipelined requests stay in the socket), only its pending output.
uint32_t Server::wanted_events(const Connection& c) const {
  const bool output = c.out_sent < c.out.size();
  if (output) return EPOLLOUT;
  return c.login ? 0u : uint32_t{EPOLLIN};
}

void Server::send(Connection& c, std::string bytes) {
  if (c.out_sent == c.out.size()) {
    c.out = std::move(bytes);
    c.out_sent = 0;
  } else {
    c.out += bytes;
  }
  flush(c);
}

// Writes what the socket takes; waits for EPOLLOUT for the rest. A
// connection to be closed closes once its last byte is out.
void Server::flush(Connection& c) {
  while (c.out_sent < c.out.size()) {
    iovec iov{c.out.data() + c.out_sent, c.out.size() - c.out_sent};
    const ssize_t n = c.transport->writev(&iov, 1);
    if (n < 0) return close(c, "write failed");
    if (n == 0) break;
    c.out_sent += static_cast<size_t>(n);
  }
  if (c.out_sent == c.out.size()) {
    c.out.clear();
    c.out_sent = 0;
    if (c.close_after_flush) return close(c, "response sent");
    if (c.upgrade != nullptr) return hand_off(c);
  }
  watch(c, wanted_events(c));
}

}  // namespace tw::http
