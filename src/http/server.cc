#include "http/server.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "base/affinity.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/rate_limit.h"
#include "http/connection.h"
#include "http/response.h"
#include "io/socket.h"
#include "session/tcp_transport.h"
#include "session/tls_transport.h"

namespace tw::http {

namespace {
constexpr int kNiceness = 10;
constexpr uint32_t kTickMs = 50;
constexpr size_t kAcceptsPerTurn = 64;
// While a connection waits for a password check, how often its Login is looked at.
constexpr int kLoginPollMs = 2;
}  // namespace

Server::Server(ServerSettings settings, Routes routes, auth::Authority* authority)
    : settings_(settings), routes_(std::move(routes)), authority_(authority) {}

Server::~Server() { stop(); }

void Server::add_listener(ListenSocket socket) { acceptors_.push_back(std::make_unique<Acceptor>(*this, std::move(socket))); }

void Server::add_websocket(std::string path, WebSocketRoute route) { websockets_[std::move(path)] = std::move(route); }

void Server::start() {
  thread_ = std::thread([this] {
    name_current_thread("tw-http");
    lower_current_thread_priority(kNiceness, "HTTP thread");  // a loop woken by market data wins over a scrape
    run();
  });
}

void Server::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_relaxed);
  reactor_.wake();
  thread_.join();
}

void Server::request_tls_reload() {
  tls_reload_.store(true, std::memory_order_relaxed);
  reactor_.wake();
}

void Server::reload_tls() {
  for (const auto& acceptor : acceptors_) {
    if (acceptor->socket.tls != nullptr) acceptor->socket.tls->reload_logged(acceptor->socket.name);
  }
}

void Server::run() {
  reactor_.claim_owner();
  for (const auto& acceptor : acceptors_) {
    if (auto added = reactor_.add(acceptor->socket.fd, EPOLLIN, acceptor.get()); !added) {
      TW_ERROR("cannot watch the listening socket %s: %s", acceptor->socket.name.c_str(), added.error().message.c_str());
    }
  }
  reactor_.set_tick(kTickMs, [this](uint64_t now_ns) { tick(now_ns); });
  reactor_.set_end_of_turn([this] { reap(); });
  while (!stop_.load(std::memory_order_relaxed)) {
    if (tls_reload_.exchange(false, std::memory_order_relaxed)) reload_tls();
    reactor_.run_once(parked_ > 0 ? kLoginPollMs : -1);
    if (parked_ > 0) poll_logins(monotonic_ns());
  }
  for (const auto& acceptor : acceptors_) reactor_.remove(acceptor->socket.fd);
  for (auto& [fd, c] : connections_) close(*c, "listener stopping");
  reap();
}

void Server::accept_pending(const ListenSocket& socket) {
  for (size_t i = 0; i < kAcceptsPerTurn; ++i) {
    std::string peer;
    const int fd = io::accept_nonblocking(socket.fd, &peer);
    if (fd < 0) return;
    if (connections_.size() >= settings_.max_connections) {
      stats_.connections_refused.fetch_add(1, std::memory_order_relaxed);  // before the answer a client may act on
      // A plain connection is told why; a TLS one could not read it before its handshake.
      if (socket.tls == nullptr) {
        static constexpr char kBusy[] =
            "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 21\r\nConnection: close\r\n\r\nconnection limit hit\n";
        (void)::send(fd, kBusy, sizeof kBusy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      TW_WARN_LIMITED("http %s: refused, %u connections open (limits.max_http_connections)", peer.c_str(),
                      settings_.max_connections);
      io::close_fd(fd);
      continue;
    }
    std::unique_ptr<session::Transport> transport;
    if (socket.tls != nullptr) {
      auto tls = session::TlsTransport::accept(*socket.tls, fd);
      if (!tls) {
        TW_WARN_LIMITED("http %s: %s", peer.c_str(), tls.error().message.c_str());
        continue;
      }
      transport = std::move(*tls);
    } else {
      transport = std::make_unique<session::TcpTransport>(fd);
    }
    stats_.connections_accepted.fetch_add(1, std::memory_order_relaxed);
    auto c = std::make_unique<Connection>(*this, std::move(transport), std::move(peer), settings_.limits);
    c->deadline_ns = monotonic_ns() + uint64_t{settings_.handshake_timeout_ms} * 1'000'000;
    c->deadline_reason = "tls handshake timed out";
    c->tls = socket.tls != nullptr;
    Connection& ref = *c;
    if (auto added = reactor_.add(fd, EPOLLIN, &ref); !added) {
      TW_WARN_LIMITED("http %s: %s", ref.peer.c_str(), added.error().message.c_str());
      continue;  // c's transport closes the fd
    }
    connections_.emplace(fd, std::move(c));
    open_.store(connections_.size(), std::memory_order_relaxed);
    ref.events = EPOLLIN;
    on_io(ref, EPOLLIN);  // a plain connection is ready at once; TLS sends nothing until the client speaks
  }
}

void Server::watch(Connection& c, uint32_t events) {
  if (c.closed || c.events == events) return;
  (void)reactor_.modify(c.transport->fd(), events, &c);
  c.events = events;
}

void Server::tick(uint64_t now_ns) {
  for (auto& [fd, c] : connections_) {
    if (c->closed) continue;
    if (c->upgrade != nullptr) {  // its 101 is not out yet; the connection is not served any more
      if (c->deadline_ns != 0 && now_ns >= c->deadline_ns) close(*c, "websocket handshake not taken");
      continue;
    }
    if (c->next_event) {
      if (now_ns >= c->next_event_ns) next_event(*c, now_ns);
      continue;
    }
    if (c->deadline_ns != 0 && now_ns >= c->deadline_ns) {
      if (c->parser.in_request() || !c->in.empty()) {
        TW_WARN_LIMITED("http %s: 408, request not whole within %u ms", c->peer.c_str(), settings_.request_timeout_ms);
        stats_.timeouts.fetch_add(1, std::memory_order_relaxed);
        Response timeout = Response::text(408, "request not complete within " +
                                                   std::to_string(settings_.request_timeout_ms) + " ms\n");
        c->close_after_flush = true;
        send(*c, serialize(timeout, false));
        if (!c->closed && c->out.empty()) close(*c, "request timeout");
      } else {
        close(*c, c->deadline_reason);
      }
    }
  }
}

// The stream's next event, if the source has one; nullopt ends the stream.
void Server::next_event(Connection& c, uint64_t now_ns) {
  c.next_event_ns = now_ns + c.event_interval_ns;
  if (!c.out.empty()) return;  // the client is not keeping up: skip this one
  std::optional<std::string> data;
  try {
    data = c.next_event();
  } catch (const std::exception& e) {
    TW_WARN_LIMITED("http %s: event stream failed: %s", c.peer.c_str(), e.what());
    data.reset();
  }
  if (!data) return close(c, "event stream ended");
  if (!data->empty()) send(c, sse_event(*data));
}

void Server::close(Connection& c, const char* why) {
  if (c.closed) return;
  c.closed = true;
  if (c.login) end_login(c);  // the verifier finishes it for nobody
  TW_DEBUG("http %s closed: %s", c.peer.c_str(), why);
  reactor_.remove(c.transport->fd());
  closing_.push_back(c.transport->fd());
}

// Connections are destroyed here, at the end of the turn that closed them:
// no handler of this turn holds one any more.
void Server::reap() {
  for (int fd : closing_) {
    auto it = connections_.find(fd);
    if (it == connections_.end()) continue;
    if (it->second->transport) it->second->transport->shutdown();
    connections_.erase(it);
  }
  closing_.clear();
  handed_off_.clear();
  open_.store(connections_.size(), std::memory_order_relaxed);
}

}  // namespace tw::http
