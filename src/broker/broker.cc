#include "broker/broker.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/log.h"
#include "broker/counters.h"
#include "broker/fanout.h"
#include "broker/native_session.h"
#include "broker/router.h"
#include "io/socket.h"
#include "reactor/reactor.h"

namespace tw::broker {

namespace {
constexpr uint32_t kTickMs = 50;
constexpr size_t kMinArena = 8u << 20;

size_t arena_capacity_for(const config::BrokerConfig& c) {
  return std::max<size_t>(kMinArena, 2ull * c.limits.max_frame + 4096);
}

RouterLimits router_limits_for(const config::BrokerConfig& c) {
  RouterLimits l;
  l.topic = {c.limits.max_topic_length, c.limits.max_topic_depth};
  l.max_subscriptions = c.limits.max_subscriptions;
  l.max_channels = c.limits.max_channels;
  l.request_timeout_ms = c.request_timeout_ms;
  l.release_linger_ms = c.release_linger_ms;
  l.not_found_ttl_ms = c.not_found_ttl_ms;
  l.balance = c.provider_balance == "round-robin" ? Balance::RoundRobin : Balance::LeastLoaded;
  l.default_policy = c.slow_consumer_policy == "drop"         ? SlowPolicy::Drop
                     : c.slow_consumer_policy == "disconnect" ? SlowPolicy::Disconnect
                                                              : SlowPolicy::Conflate;
  return l;
}
}  // namespace

// The listening socket's handler: accepts everything pending each turn.
struct Broker::Impl final : reactor::IoHandler {
  explicit Impl(config::BrokerConfig c)
      : config(std::move(c)), fanout(arena_capacity_for(config)), router(router_limits_for(config), fanout) {}

  void on_io(uint32_t) override { accept_pending(); }
  void accept_pending();
  void reject(int fd);
  void shed_one_connection();
  void end_of_turn();
  void tick(uint64_t now_ns);
  void shutdown();
  NativeSession::Env env() { return {config, reactor, router, fanout, counters}; }

  config::BrokerConfig config;
  reactor::Reactor reactor;
  Fanout fanout;
  Router router;
  Counters counters;
  int listen_fd = -1;
  int spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);  // released to accept-and-close at EMFILE
  uint16_t port = 0;
  std::atomic<bool> stop_requested{false};
  std::unordered_map<NativeSession*, std::unique_ptr<NativeSession>> sessions;
  std::vector<NativeSession*> closing;
};

void Broker::Impl::accept_pending() {
  for (;;) {
    std::string peer;
    int fd = io::accept_nonblocking(listen_fd, &peer);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) shed_one_connection();
      return;
    }
    if (sessions.size() >= config.limits.max_connections) {
      reject(fd);
      continue;
    }
    auto session = std::make_unique<NativeSession>(env(), fd, peer, monotonic_ns());
    if (!reactor.add(fd, EPOLLIN, session.get())) continue;  // the session's destructor closes fd
    ++counters.connections_accepted;
    counters.connections_open = sessions.size() + 1;
    TW_DEBUG("accepted %s", peer.c_str());
    sessions.emplace(session.get(), std::move(session));
  }
}

// Out of file descriptors: the pending connection would keep the
// level-triggered listener ready forever. Free the spare fd, accept the
// connection and close it at once, then take the spare back.
void Broker::Impl::shed_one_connection() {
  ++counters.connections_rejected;
  io::close_fd(spare_fd);
  io::close_fd(io::accept_nonblocking(listen_fd));
  spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  TW_WARN("out of file descriptors: a new connection was refused");
}

void Broker::Impl::reject(int fd) {
  ++counters.connections_rejected;
  uint8_t buf[128];
  size_t n = wire::encode({buf, sizeof buf}, wire::ErrorMsg{wire::Code::TooManyConnections, "connection limit reached"});
  ssize_t rc = ::send(fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
  (void)rc;
  io::close_fd(fd);
}

// Flush every connection with output (one writev each), then reap the ones
// that are closing: their final bytes go out after everything queued before.
void Broker::Impl::end_of_turn() {
  fanout.flush_all();
  closing.clear();
  for (auto& [ptr, session] : sessions) {
    if (session->closing()) closing.push_back(ptr);
  }
  for (NativeSession* s : closing) {
    router.remove_outlet(s);
    fanout.forget(s);
    s->finish();
    sessions.erase(s);
  }
  counters.connections_open = sessions.size();
}

void Broker::Impl::tick(uint64_t now_ns) {
  for (auto& [ptr, session] : sessions) session->on_tick(now_ns);
  router.on_tick();
  end_of_turn();
}

// Stop accepting, let queued output drain for up to shutdown_grace_ms, then
// say goodbye with SERVER_SHUTDOWN and close every connection.
void Broker::Impl::shutdown() {
  TW_INFO("shutting down: %zu connections", sessions.size());
  reactor.remove(listen_fd);
  io::close_fd(listen_fd);
  listen_fd = -1;
  for (auto& [ptr, session] : sessions) session->stop_reading();
  uint64_t deadline = monotonic_ns() + config.shutdown_grace_ms * 1'000'000ull;
  auto pending = [&] {
    for (auto& [ptr, session] : sessions) {
      if (session->has_output() && !session->closing()) return true;
    }
    return false;
  };
  while (pending() && monotonic_ns() < deadline) reactor.run_once(10);
  for (auto& [ptr, session] : sessions) session->fail(wire::Code::ServerShutdown, "broker shutting down");
  end_of_turn();
  const auto& loop = reactor.stats();
  if (counters.conflated_channels != 0 || counters.dropped_messages != 0 || counters.slow_consumers != 0) {
    TW_INFO("slow consumers: %lu channels conflated, %lu refresh images, %lu messages dropped, %lu disconnected",
            static_cast<unsigned long>(counters.conflated_channels), static_cast<unsigned long>(counters.refresh_images),
            static_cast<unsigned long>(counters.dropped_messages), static_cast<unsigned long>(counters.slow_consumers));
  }
  TW_INFO("stopped: %lu connections served, %lu publishes, %lu deliveries, max loop turn %lu us",
          static_cast<unsigned long>(counters.connections_accepted),
          static_cast<unsigned long>(router.stats().publishes), static_cast<unsigned long>(router.stats().deliveries),
          static_cast<unsigned long>(loop.max_turn_ns / 1000));
}

Broker::Broker(config::BrokerConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
Broker::~Broker() {
  io::close_fd(impl_->listen_fd);
  io::close_fd(impl_->spare_fd);
}

Status Broker::listen() {
  std::string host;
  uint16_t port = 0;
  if (!config::split_host_port(impl_->config.listen, host, port)) {
    return Error{"invalid listen address '" + impl_->config.listen + "' (expected HOST:PORT)"};
  }
  auto fd = io::listen_tcp(host, port);
  if (!fd) return Error{fd.error().message};
  impl_->listen_fd = *fd;
  impl_->port = io::local_port(*fd);
  if (auto added = impl_->reactor.add(*fd, EPOLLIN, impl_.get()); !added) return added;
  return Ok{};
}

uint16_t Broker::port() const { return impl_->port; }

void Broker::run() {
  Impl& s = *impl_;
  s.reactor.set_end_of_turn([&s] { s.end_of_turn(); });
  s.reactor.set_tick(kTickMs, [&s](uint64_t now) { s.tick(now); });
  while (!s.stop_requested.load(std::memory_order_relaxed)) s.reactor.run_once(-1);
  s.shutdown();
}

void Broker::stop() {
  impl_->stop_requested.store(true, std::memory_order_relaxed);
  impl_->reactor.wake();
}

const Counters& Broker::counters() const { return impl_->counters; }

}  // namespace tw::broker
