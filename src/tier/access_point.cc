#include "tier/access_point.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "base/clock.h"
#include "base/log.h"
#include "base/rate_limit.h"
#include "io/socket.h"
#include "session/tcp_transport.h"
#include "session/tls_transport.h"
#include "tickwire/wire/codec.h"

namespace tw::tier {

namespace {
constexpr uint32_t kTickMs = 50;
constexpr size_t kMinArena = 8u << 20;

size_t arena_capacity_for(const config::BrokerConfig& c) {
  return std::max<size_t>(kMinArena, 2ull * c.limits.max_frame + 4096);
}

}  // namespace

AccessPoint::AccessPoint(const config::BrokerConfig& config, const broker::RouterLimits& limits,
                         std::atomic<uint32_t>& open_connections, size_t input_budget)
    : config_(config),
      fanout_(arena_capacity_for(config)),
      router_(limits, fanout_),
      loop_(input_budget),
      open_connections_(open_connections),
      spare_fd_(::open("/dev/null", O_RDONLY | O_CLOEXEC)) {}

AccessPoint::~AccessPoint() {
  if (mailbox_) mailbox_->close();
  io::close_fd(spare_fd_);
}

void AccessPoint::attach_spool(queue::Spool* spool) {
  spool_ = spool;
  mailbox_ = std::make_shared<queue::Mailbox>([this] { waker_.notify_always(); });
}

void AccessPoint::attach_gateways(cache::ChannelDirectory& directory, std::vector<Link*> links,
                                  std::vector<Waker*> wakers) {
  pending_origins_.resize(links.size());
  uplink_ = std::make_unique<Uplink>(directory, std::move(links), std::move(wakers));
  mirror_ = &router_.attach_upstream(uplink_.get());
}

void AccessPoint::fence_publishes(std::vector<const Link*> others) {
  fence_ = std::make_unique<InterestFence>(std::move(others));
}

void AccessPoint::accept_for(const std::vector<ListenSocket>& sockets, std::vector<AccessPoint*> all) {
  for (const ListenSocket& socket : sockets) {
    acceptors_.push_back(std::make_unique<Acceptor>(*this, socket));
    if (socket.tls != nullptr && !handshaker_) {
      handshaker_ = std::make_unique<session::Handshaker>(
          config_.handshake_timeout_ms, [this] { open_connections_.fetch_sub(1, std::memory_order_relaxed); });
    }
  }
  peers_ = std::move(all);
}

void AccessPoint::adopt(std::unique_ptr<session::Transport> transport, std::string peer, const Protocol& protocol) {
  {
    std::lock_guard lock(handoff_mutex_);
    handoffs_.push_back({std::move(transport), std::move(peer), &protocol, {}});
  }
  has_handoffs_.store(true, std::memory_order_release);
  waker_.notify();
}

void AccessPoint::adopt_upgrade(std::unique_ptr<session::Transport> transport, std::string peer,
                                const Protocol& protocol, std::string user) {
  if (ha_role_ != nullptr && !ha_role_->serving()) {
    TW_WARN_LIMITED("%s: websocket refused: %s", peer.c_str(), ha_role_->refusal().c_str());
    return;  // the transport's destructor closes it
  }
  if (open_connections_.fetch_add(1, std::memory_order_relaxed) >= config_.limits.max_connections) {
    open_connections_.fetch_sub(1, std::memory_order_relaxed);
    TW_WARN_LIMITED("%s: websocket refused, connection limit reached", peer.c_str());
    return;  // the transport's destructor closes it
  }
  {
    std::lock_guard lock(handoff_mutex_);
    handoffs_.push_back({std::move(transport), std::move(peer), &protocol, std::move(user)});
  }
  has_handoffs_.store(true, std::memory_order_release);
  // Always: a single-threaded loop never announces its sleep (Waker::may_sleep
  // is the tiered loop's), and one eventfd write per connection is nothing.
  waker_.notify_always();
}

void AccessPoint::request_tls_reload() {
  tls_reload_requested_.store(true, std::memory_order_relaxed);
  waker_.notify_always();
}

// A failed reload keeps the certificate in use: the broker stays reachable.
void AccessPoint::reload_tls() {
  for (const auto& acceptor : acceptors_) {
    const ListenSocket& socket = acceptor->socket;
    if (socket.tls != nullptr) socket.tls->reload_logged(socket.name);
  }
}

void AccessPoint::report_usage(const std::vector<session::Session*>& sessions) {
  std::vector<std::pair<std::string, auth::Usage>> deltas;
  for (session::Session* s : sessions) {
    if (s->grants() == nullptr) continue;
    auth::Usage u = s->take_usage();
    if (!u.empty()) deltas.emplace_back(s->grants()->user(), u);
  }
  if (!deltas.empty()) authority_->add_usage(deltas);
}

// Within one tick of a users file reload, every session holds what the new rules allow.
void AccessPoint::follow_auth_reload() {
  if (authority_ == nullptr) return;
  const uint64_t generation = authority_->generation();
  if (generation == auth_generation_) return;
  if (auth_generation_ != 0) {
    for (auto& [token, session] : sessions_) session->reentitle();
  }
  auth_generation_ = generation;
}

// At most kAcceptsPerTurn connections per turn: the listener is level-triggered,
// so a storm of connections is taken a slice per turn, between the other
// connections' input, instead of in one long turn.
void AccessPoint::accept_pending(const ListenSocket& socket) {
  for (size_t accepted = 0; accepted < kAcceptsPerTurn; ++accepted) {
    std::string peer;
    int fd = io::accept_nonblocking(socket.fd, &peer);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) shed_one_connection(socket.fd);
      return;
    }
    if (refuse_if_not_serving(fd, *socket.protocol, socket.tls != nullptr)) continue;
    if (open_connections_.load(std::memory_order_relaxed) >= config_.limits.max_connections) {
      reject(fd, *socket.protocol);
      continue;
    }
    open_connections_.fetch_add(1, std::memory_order_relaxed);
    AccessPoint* target = peers_[next_peer_++ % peers_.size()];
    if (socket.tls != nullptr) {
      start_tls(fd, std::move(peer), socket, target);
    } else if (target == this) {
      open_session(std::make_unique<session::TcpTransport>(fd), std::move(peer), *socket.protocol, {});
    } else {
      target->adopt(std::make_unique<session::TcpTransport>(fd), std::move(peer), *socket.protocol);
    }
  }
}

void AccessPoint::start_tls(int fd, std::string peer, const ListenSocket& socket, AccessPoint* target) {
  auto transport = session::TlsTransport::accept(*socket.tls, fd);  // SSL_new: cheap; the handshake is not
  if (!transport) {
    TW_WARN_LIMITED("%s", transport.error().message.c_str());
    open_connections_.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  handshaker_->add(std::move(*transport), std::move(peer),
                   [target, protocol = socket.protocol](std::unique_ptr<session::Transport> ready, std::string peer) {
                     target->adopt(std::move(ready), std::move(peer), *protocol);
                   });
}

void AccessPoint::open_session(std::unique_ptr<session::Transport> transport, std::string peer,
                               const Protocol& protocol, const std::string& user) {
  const int fd = transport->fd();
  std::unique_ptr<session::Session> session = protocol.open(env(), std::move(transport), peer, user, monotonic_ns());
  session->set_protocol_name(protocol.name);
  if (protocol.tick && std::find(ticked_.begin(), ticked_.end(), &protocol) == ticked_.end()) ticked_.push_back(&protocol);
  if (!reactor_.add(fd, EPOLLIN, session.get())) {  // the session's destructor closes fd
    open_connections_.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  const uint32_t token = next_token_++;
  session->token = token;
  ++counters_.connections_accepted;
  TW_DEBUG("accepted %s", peer.c_str());
  session->start();
  sessions_.emplace(token, std::move(session));
  counters_.connections_open = sessions_.size();
}

bool AccessPoint::take_handoffs() {
  if (!has_handoffs_.load(std::memory_order_acquire)) return false;
  std::vector<Handoff> taken;
  {
    std::lock_guard lock(handoff_mutex_);
    taken.swap(handoffs_);
    has_handoffs_.store(false, std::memory_order_relaxed);
  }
  for (Handoff& handoff : taken) {
    open_session(std::move(handoff.transport), std::move(handoff.peer), *handoff.protocol, handoff.user);
  }
  return !taken.empty();
}

// Out of file descriptors: the pending connection would keep the
// level-triggered listener ready forever. Free the spare fd, accept the
// connection and close it at once, then take the spare back.
void AccessPoint::shed_one_connection(int listen_fd) {
  ++counters_.connections_rejected;
  ++counters_.fd_exhausted;
  io::close_fd(spare_fd_);
  io::close_fd(io::accept_nonblocking(listen_fd));
  spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  TW_ERROR_LIMITED("out of file descriptors (%u connections open): a new connection was refused; raise the "
                   "process's file descriptor limit (ulimit -n) or lower limits.max_connections",
                   open_connections_.load(std::memory_order_relaxed));
}

// An HA backup serves no client: a TLS connection is closed before its
// handshake (no plaintext may go to it), any other gets its protocol's
// refusal naming the primary (native: ERROR NOT_PRIMARY).
bool AccessPoint::refuse_if_not_serving(int fd, const Protocol& protocol, bool tls) {
  if (ha_role_ == nullptr || ha_role_->serving()) return false;
  ++counters_.connections_rejected;
  if (!tls && protocol.refuse != nullptr) {
    const std::vector<uint8_t> bytes = protocol.refuse(wire::Code::NotPrimary, ha_role_->refusal());
    ssize_t rc = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)rc;
  }
  io::close_fd(fd);
  return true;
}

// A primary that learns another broker leads closes every connection, so
// that its clients fail over to the new primary.
void AccessPoint::follow_ha_role() {
  if (ha_role_ == nullptr) return;
  const uint64_t generation = ha_role_->generation();
  if (generation == ha_generation_) return;
  ha_generation_ = generation;
  if (ha_role_->serving()) return;
  const std::string why = ha_role_->refusal();
  for (auto& [token, session] : sessions_) {
    if (!session->closing()) session->fail(wire::Code::NotPrimary, why, /*warn=*/false);
  }
}

void AccessPoint::reject(int fd, const Protocol& protocol) {
  ++counters_.connections_rejected;
  if (!protocol.refusal.empty()) {
    ssize_t rc = ::send(fd, protocol.refusal.data(), protocol.refusal.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)rc;
  }
  io::close_fd(fd);
}

// Paced replies produce their next part, every connection with output is
// flushed (one writev each), then the ones that are closing are reaped: their
// final bytes go out after everything queued before. Only then are the
// gateways' records released: queued output may point into them. Idle
// connections cost nothing here: only the dirty, closing and paced ones are visited.
void AccessPoint::end_of_turn() {
  session::Session::pace_all(loop_);
  fanout_.flush_all();
  reap_closing();
  pacing_ready_ = session::Session::pacing_ready(loop_);
  counters_.connections_open = sessions_.size();
  if (uplink_) {
    for (Link* link : uplink_->links()) link->to_access_point.ring().release();
    uplink_->flush();
    apply_input_pressure();
  }
}

// A session's goodbye can make others close (a provider's subscribers that
// turn slow): they list themselves again and are reaped in the same pass.
void AccessPoint::reap_closing() {
  while (!loop_.closing.empty()) {
    closing_.swap(loop_.closing);
    for (session::Session* s : closing_) {
      std::erase(loop_.paced, s);
      auto it = sessions_.find(s->token);
      if (it == sessions_.end() || it->second.get() != s) continue;  // never registered (reactor add failed)
      router_.remove_outlet(s);
      fanout_.forget(s);
      s->finish();
      if (authority_ != nullptr && authority_->accounts_usage()) report_usage({s});
      sessions_.erase(it);
      open_connections_.fetch_sub(1, std::memory_order_relaxed);
      ++reaped_since_trim_;
    }
    closing_.clear();
  }
}

// A gateway that falls behind fills its rings, then this access point's
// spill; past a bound the connections are not read, so TCP holds the
// publishers back instead of the spill growing without end.
void AccessPoint::apply_input_pressure() {
  const size_t backlog = uplink_->backlog();
  const bool pause = input_paused_ ? backlog > kResumeInputBelow : backlog > kPauseInputAbove;
  if (pause == input_paused_) return;
  input_paused_ = pause;
  TW_INFO("gateways behind (%zu bytes waiting): %s reading connections", backlog, pause ? "stopped" : "resumed");
  for (auto& [token, session] : sessions_) session->pause_input(pause);
}

void AccessPoint::tick(uint64_t now_ns) {
  follow_auth_reload();
  follow_ha_role();
  if (authority_ != nullptr && authority_->accounts_usage()) {
    std::vector<session::Session*> all;
    for (auto& [token, session] : sessions_) all.push_back(session.get());
    report_usage(all);
  }
  session::Session::tick_due(loop_, now_ns);
  for (const Protocol* protocol : ticked_) protocol->tick(env(), now_ns);
  inbox_.run_pending();  // the admin side's questions and actions (src/admin)
  router_.on_tick();
  end_of_turn();
  return_freed_memory(now_ns);
  publish_snapshot();
}

// Many connections closed (a storm, a mass disconnect): the allocator keeps
// their memory in its free lists, and the broker would stay at its peak RSS.
// Give the free pages back, at most once a second (it walks the heap).
void AccessPoint::return_freed_memory(uint64_t now_ns) {
  if (reaped_since_trim_ < kTrimAfterReaped || now_ns - last_trim_ns_ < 1'000'000'000) return;
  reaped_since_trim_ = 0;
  last_trim_ns_ = now_ns;
  ::malloc_trim(0);
}

void AccessPoint::publish_snapshot() {
  published_.publish({counters_, reactor_.stats(), router_.stats(), router_.is_mirror() ? 0 : router_.channel_count()});
}

// Records from the gateways, or connections handed over by another access point.
bool AccessPoint::has_cross_thread_input() {
  for (Link* link : uplink_->links()) {
    if (!link->to_access_point.ring().empty()) return true;
  }
  return has_handoffs_.load(std::memory_order_relaxed) || (mailbox_ && mailbox_->has_pending());
}

void AccessPoint::run(const std::atomic<bool>& stop) {
  reactor_.claim_owner();
  fanout_.claim_owner();
  router_.claim_owner();
  for (const auto& acceptor : acceptors_) {
    if (auto added = reactor_.add(acceptor->socket.fd, EPOLLIN, acceptor.get()); !added) {
      TW_ERROR("cannot watch the listening socket %s: %s", acceptor->socket.name.c_str(),
               added.error().message.c_str());
    }
  }
  reactor_.set_end_of_turn([this] { end_of_turn(); });
  reactor_.set_tick(kTickMs, [this](uint64_t now) { tick(now); });
  if (handshaker_) handshaker_->start();
  while (!stop.load(std::memory_order_relaxed)) {
    if (tls_reload_requested_.exchange(false, std::memory_order_relaxed)) reload_tls();
    bool busy = take_handoffs();
    busy |= drain_gateways();
    busy |= mailbox_ && mailbox_->deliver_pending();  // the store's answers: one load a turn
    busy |= pacing_ready_;
    int wait = busy ? 0 : -1;
    if (!busy && uplink_) {
      // Spilled records wait for ring space; a fenced publish, for other threads' progress.
      if (uplink_->backlog() > 0 || loop_.fenced > 0) wait = 1;
      if (!waker_.may_sleep([this] { return has_cross_thread_input(); })) wait = 0;
    }
    reactor_.run_once(wait);
    waker_.awake();
  }
  shutdown();
  publish_snapshot();  // the final numbers, for the shutdown summary
}

// Stop accepting, let queued output drain for up to shutdown_grace_ms, then
// say goodbye with SERVER_SHUTDOWN and close every connection.
void AccessPoint::shutdown() {
  for (const auto& acceptor : acceptors_) reactor_.remove(acceptor->socket.fd);
  if (handshaker_) handshaker_->stop();  // no more hand-overs from here on
  for (auto& [token, session] : sessions_) session->stop_reading();
  uint64_t deadline = monotonic_ns() + config_.shutdown_grace_ms * 1'000'000ull;
  auto pending = [&] {
    for (auto& [token, session] : sessions_) {
      if (session->has_output() && !session->closing()) return true;
    }
    return false;
  };
  while (pending() && monotonic_ns() < deadline) reactor_.run_once(10);
  for (auto& [token, session] : sessions_) session->fail(wire::Code::ServerShutdown, "broker shutting down");
  end_of_turn();
}

}  // namespace tw::tier
