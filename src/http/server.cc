#include "http/server.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
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
constexpr uint64_t kTickNs = 50'000'000;
constexpr size_t kAcceptsPerPass = 64;
// epoll data of the non-connection fds: connections use their fd (>= 0, < 2^32).
constexpr uint64_t kWakeTag = uint64_t{1} << 40;
constexpr uint64_t kListenerTag = uint64_t{1} << 41;
}  // namespace

Server::Server(ServerSettings settings, Routes routes, auth::Authority* authority)
    : settings_(settings), routes_(std::move(routes)), authority_(authority) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeTag;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
}

Server::~Server() {
  stop();
  ::close(wake_fd_);
  ::close(epoll_fd_);
}

void Server::add_listener(ListenSocket socket) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenerTag | listeners_.size();
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, socket.fd, &ev);
  listeners_.push_back(std::move(socket));
}

void Server::add_websocket(std::string path, WebSocketRoute route) { websockets_[std::move(path)] = std::move(route); }

void Server::start() {
  thread_ = std::thread([this] {
    name_current_thread("tw-http");
    // Per thread on Linux: the loops keep their priority, and win over a scrape.
    if (::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kNiceness) != 0) {
      TW_WARN("HTTP thread: cannot lower its priority; it competes with the loops as an equal");
    }
    run();
  });
}

void Server::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_relaxed);
  uint64_t one = 1;
  (void)::write(wake_fd_, &one, sizeof one);
  thread_.join();
}

void Server::run() {
  epoll_event events[64];
  uint64_t next_tick = monotonic_ns() + kTickNs;
  while (!stop_.load(std::memory_order_relaxed)) {
    const uint64_t now = monotonic_ns();
    const int timeout_ms = now >= next_tick ? 0 : static_cast<int>((next_tick - now + 999'999) / 1'000'000);
    const int n = ::epoll_wait(epoll_fd_, events, 64, timeout_ms);
    for (int i = 0; i < n; ++i) {
      const uint64_t tag = events[i].data.u64;
      if (tag == kWakeTag) {
        uint64_t value = 0;
        (void)::read(wake_fd_, &value, sizeof value);
      } else if ((tag & kListenerTag) != 0) {
        accept_pending(listeners_[tag & ~kListenerTag]);
      } else if (auto it = connections_.find(static_cast<int>(tag)); it != connections_.end()) {
        on_io(*it->second, events[i].events);
      }
    }
    if (monotonic_ns() >= next_tick) {
      tick(monotonic_ns());
      next_tick = monotonic_ns() + kTickNs;
    }
    reap();
  }
  for (auto& [fd, c] : connections_) close(*c, "listener stopping");
  reap();
}

void Server::accept_pending(const ListenSocket& socket) {
  for (size_t i = 0; i < kAcceptsPerPass; ++i) {
    std::string peer;
    const int fd = io::accept_nonblocking(socket.fd, &peer);
    if (fd < 0) return;
    if (connections_.size() >= settings_.max_connections) {
      // A plain connection is told why; a TLS one could not read it before its handshake.
      if (socket.tls == nullptr) {
        static constexpr char kBusy[] =
            "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 21\r\nConnection: close\r\n\r\nconnection limit hit\n";
        (void)::send(fd, kBusy, sizeof kBusy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      TW_WARN_LIMITED("http %s: refused, %u connections open (http_max_connections)", peer.c_str(),
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
    auto c = std::make_unique<Connection>(std::move(transport), std::move(peer), settings_.limits);
    c->deadline_ns = monotonic_ns() + uint64_t{settings_.handshake_timeout_ms} * 1'000'000;
    c->deadline_reason = "tls handshake timed out";
    Connection& ref = *c;
    connections_.emplace(fd, std::move(c));
    open_.store(connections_.size(), std::memory_order_relaxed);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = static_cast<uint64_t>(fd);
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    ref.events = EPOLLIN;
    on_io(ref, EPOLLIN);  // a plain connection is ready at once; TLS sends nothing until the client speaks
  }
}

void Server::watch(Connection& c, uint32_t events) {
  if (c.closed || c.events == events) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = static_cast<uint64_t>(c.transport->fd());
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.transport->fd(), &ev);
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
  TW_DEBUG("http %s closed: %s", c.peer.c_str(), why);
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.transport->fd(), nullptr);
  closing_.push_back(c.transport->fd());
}

// Connections are destroyed here, after the pass that closed them: no
// handler of this pass holds one any more.
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
