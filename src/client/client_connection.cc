// The client's connection state machine, driven by poll():
//
//   Idle --connect()--> Connecting --writable--> Handshake --WELCOME--> Connected
//                          |  timeout/error          | ERROR/EOF/timeout     | lost
//                          v                         v                       v
//               Idle (first connect) or Backoff --next_attempt--> Connecting
//
// Each run_once() turn, in this order: (1) timers (attempt timeouts, backoff,
// heartbeats, dead-peer detection) so a due heartbeat joins this turn's write;
// (2) flush output so requests made since the last turn leave before we block;
// (3) block in poll(2) until input, writability or the next timer; (4) read
// and dispatch; (5) flush what the handlers produced, in one send().
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <unordered_set>

#include "base/clock.h"
#include "tickwire/client/client.h"
#include "client/tcp_socket.h"
#include "session/tls_context.h"
#include "session/tls_transport.h"

namespace tw::client {

namespace {

constexpr uint64_t kNsPerMs = 1'000'000;
constexpr size_t kReadSlack = 64u << 10;   // input room beyond one max frame, for batching reads
constexpr int kMaxReadsPerTurn = 16;       // bounds one turn so timers and output keep running
constexpr uint32_t kDeadIntervals = 3;     // heartbeats missed before the broker is presumed dead

}  // namespace

Status Client::connect(const Options& options) {
  if (in_poll_ || dispatch_depth_ > 0) return Error{"connect() cannot be called from a callback"};
  if (state_ != State::Idle && state_ != State::Closed) return Error{"already connected"};
  reached_ = false;
  last_failure_.clear();  // unreachable() speaks of this connect() only
  if (options.port == 0) return Error{"port must not be 0"};
  if (options.reconnect_min_ms == 0 || options.reconnect_min_ms > options.reconnect_max_ms)
    return Error{"reconnect backoff needs 0 < min <= max"};
  if (options.protocol_version < wire::kMinProtocolVersion || options.protocol_version > wire::kProtocolVersion)
    return Error{"protocol_version must be between 1 and " + std::to_string(wire::kProtocolVersion)};
  if (!options.user.empty() && options.protocol_version < 2) return Error{"a user needs protocol version 2 or later"};
  // A connection to the same broker with the same TLS files keeps the
  // context and offers the last session; anything else starts afresh.
  const std::string tls_key = options.host + ":" + std::to_string(options.port) + "|" + options.ca + "|" +
                              options.cert + "|" + options.key;
  const bool same_tls = options.tls && tls_context_ && tls_resume_for_ == tls_key;
  options_ = options;
  if (!same_tls) {
    tls_context_.reset();
    tls_resume_.reset();
    tls_resume_for_ = tls_key;
  }
  if (options_.tls && !tls_context_) {
    auto context = session::TlsContext::client({options_.ca, options_.cert, options_.key});
    if (!context) return Error{"TLS: " + context.error().message};
    tls_context_ = std::move(*context);
  }
  servers_ = {{options_.host, options_.port}};
  for (const std::string& other : options_.failover) {
    std::pair<std::string, uint16_t> server;
    if (!parse_server_address(other, server.first, server.second)) {
      return Error{"invalid failover server '" + other + "' (expected HOST:PORT)"};
    }
    servers_.push_back(std::move(server));
  }
  current_server_ = 0;
  failed_in_round_ = 0;
  in_ = ByteBuffer(options_.max_frame + kReadSlack);
  out_ = ByteBuffer(std::min(options_.output_buffer, options_.max_output_buffer));
  ever_connected_ = false;
  backoff_ms_ = options_.reconnect_min_ms;
  std::string failures;
  for (size_t tried = 0; tried < servers_.size(); ++tried) {
    begin_attempt(monotonic_ns());
    in_poll_ = true;
    while (state_ == State::Connecting || state_ == State::Securing || state_ == State::Handshake) {
      run_once(attempt_deadline_ns_);
    }
    in_poll_ = false;
    if (state_ == State::Connected) return Ok{};
    state_ = State::Idle;
    failures += (failures.empty() ? "" : "; ") + servers_[current_server_].first + ":" +
                std::to_string(servers_[current_server_].second) + ": " + last_failure_;
    next_server();
  }
  return Error{"cannot connect to " + failures};
}

void Client::next_server() { current_server_ = (current_server_ + 1) % servers_.size(); }

int Client::poll(int timeout_ms) {
  if (in_poll_ || dispatch_depth_ > 0) return -1;
  if (state_ == State::Idle || state_ == State::Closed) return -1;
  in_poll_ = true;
  uint64_t deadline = monotonic_ns() + static_cast<uint64_t>(std::max(timeout_ms, 0)) * kNsPerMs;
  int delivered = 0;
  do {
    delivered += run_once(deadline);
  } while (delivered == 0 && state_ != State::Idle && state_ != State::Closed && monotonic_ns() < deadline);
  in_poll_ = false;
  sweep_subscriptions();
  return delivered;
}

Status Client::flush() {
  if (out_.empty()) return Ok{};
  if (fd_ < 0 || state_ == State::Connecting || state_ == State::Securing) return Error{"not connected"};
  if (!write_some()) return Error{"connection lost: " + last_failure_};
  return Ok{};
}

void Client::close() {
  if (fd_ >= 0 && state_ == State::Connected) drain_output(options_.close_linger_ms);
  if (tls_) tls_->shutdown();  // close_notify: an orderly end, not a truncation
  teardown_socket();
  channels_.clear();
  streams_.clear();  // close() calls no callbacks
  state_ = State::Closed;
}

void Client::begin_attempt(uint64_t now) {
  auto fd = start_connect(servers_[current_server_].first, servers_[current_server_].second);
  if (!fd) {
    attempt_failed(fd.error().message, now);
    return;
  }
  fd_ = *fd;
  state_ = State::Connecting;
  attempt_deadline_ns_ = now + uint64_t{options_.connect_timeout_ms} * kNsPerMs;
}

void Client::attempt_failed(std::string_view reason, uint64_t now) {
  teardown_socket();
  last_failure_.assign(reason);
  if (options_.reconnect && ever_connected_) {
    state_ = State::Backoff;
    next_server();
    if (++failed_in_round_ < servers_.size()) {
      next_attempt_ns_ = now;  // the next server at once: only a whole round backs off
      return;
    }
    failed_in_round_ = 0;
    next_attempt_ns_ = now + uint64_t{backoff_ms_} * kNsPerMs;
    // A backup that answered is about to be elected or names the primary:
    // keep trying at the shortest backoff rather than doubling it.
    if (!not_primary_in_round_) backoff_ms_ = std::min(backoff_ms_ * 2, options_.reconnect_max_ms);
    not_primary_in_round_ = false;
  } else {
    state_ = State::Idle;
  }
}

void Client::connection_lost(std::string_view reason) {
  if (state_ != State::Connected) {
    attempt_failed(reason, monotonic_ns());
    return;
  }
  std::string why(reason);  // `reason` may point into a buffer that teardown resets
  teardown_socket();
  channels_.clear();
  last_failure_ = why;
  state_ = options_.reconnect ? State::Backoff : State::Idle;
  if (servers_.size() > 1) {
    // Another broker of the list may already serve (an HA pair's new primary): try it at once.
    next_server();
    failed_in_round_ = 1;
    next_attempt_ns_ = monotonic_ns();
  } else {
    next_attempt_ns_ = monotonic_ns() + uint64_t{backoff_ms_} * kNsPerMs;
    backoff_ms_ = std::min(backoff_ms_ * 2, options_.reconnect_max_ms);
  }
  end_streams_on_loss();  // the broker forgets them too, and re-requests them after PROVIDE
  emit_connection(ConnectionEvent::Disconnected, why);
}

void Client::SessionFree::operator()(ssl_session_st* session) const { SSL_SESSION_free(session); }

bool Client::tls_resumed() const { return tls_ && tls_->session_reused(); }

void Client::teardown_socket() {
  if (tls_) {
    // TLS 1.3 sends its tickets after the handshake: the session taken now, at the end, carries them.
    if (SSL_SESSION* session = tls_->take_session(); session && SSL_SESSION_is_resumable(session)) {
      tls_resume_.reset(session);
    } else if (session) {
      SSL_SESSION_free(session);
    }
    tls_.reset();  // closes fd_
  } else {
    close_fd(fd_);
  }
  fd_ = -1;
  in_.clear();
  out_.clear();
  pending_.clear();
  ++epoch_;
}

void Client::on_welcome(const wire::Welcome& welcome) {
  state_ = State::Connected;
  server_ = ServerInfo{std::string(welcome.server_name), welcome.version, welcome.heartbeat_ms,
                       welcome.max_frame, welcome.max_subscriptions, welcome.limits};
  heartbeat_ms_ = welcome.heartbeat_ms != 0 ? welcome.heartbeat_ms : options_.heartbeat_ms;
  backoff_ms_ = options_.reconnect_min_ms;
  failed_in_round_ = 0;
  channels_.clear();
  resend_state();
  bool reconnected = ever_connected_;
  ever_connected_ = true;
  if (reconnected) ++counters_.reconnects;
  emit_connection(reconnected ? ConnectionEvent::Reconnected : ConnectionEvent::Connected, {});
}

void Client::resend_state() {
  for (size_t i = 0; i < registrations_.size(); ++i)
    send_register(static_cast<PublisherId>(i + 1), registrations_[i]);
  for (const auto& p : provisions_)
    if (p->live) send_provide(*p);
  std::unordered_set<std::string_view> sent;
  for (const auto& sub : subscriptions_)
    if (sub->live && sent.insert(sub->pattern).second)
      send_subscribe(wire::MsgType::Subscribe, sub->pattern, sub->policy, sub->conflate_ms, sub->delay_ms);
  resend_guaranteed();
}

void Client::service_timers(uint64_t now) {
  switch (state_) {
    case State::Connecting:
    case State::Securing:
    case State::Handshake:
      if (now >= attempt_deadline_ns_) attempt_failed("timed out waiting for the broker", now);
      break;
    case State::Backoff:
      if (now >= next_attempt_ns_) begin_attempt(now);
      break;
    case State::Connected: {
      if (heartbeat_ms_ == 0) break;
      uint64_t interval = uint64_t{heartbeat_ms_} * kNsPerMs;
      if (now - last_recv_ns_ > kDeadIntervals * interval) {
        connection_lost("no data from the broker for 3 heartbeat intervals");
      } else if (now - last_send_ns_ >= interval && out_.empty()) {
        if (queue_frame(wire::kHeaderSize, [](std::span<uint8_t> out) { return wire::encode_heartbeat(out); }))
          ++counters_.heartbeats_sent;
      }
      break;
    }
    default:
      break;
  }
}

uint64_t Client::next_timer_ns(uint64_t) const {
  switch (state_) {
    case State::Connecting:
    case State::Securing:
    case State::Handshake: return attempt_deadline_ns_;
    case State::Backoff: return next_attempt_ns_;
    case State::Connected: {
      if (heartbeat_ms_ == 0) return UINT64_MAX;
      uint64_t interval = uint64_t{heartbeat_ms_} * kNsPerMs;
      return std::min(last_send_ns_ + interval, last_recv_ns_ + kDeadIntervals * interval + 1);
    }
    default: return UINT64_MAX;
  }
}

int Client::run_once(uint64_t deadline_ns) {
  uint64_t now = monotonic_ns();
  service_timers(now);
  const bool connecting = state_ == State::Connecting || state_ == State::Securing;
  if (fd_ >= 0 && !connecting && !out_.empty()) write_some();

  uint64_t wake = std::min(deadline_ns, next_timer_ns(now));
  int timeout_ms = wake <= now ? 0 : static_cast<int>(std::min<uint64_t>((wake - now + kNsPerMs - 1) / kNsPerMs, INT_MAX));
  pollfd pfd{fd_, 0, 0};
  if (fd_ >= 0) {
    pfd.events = state_ == State::Connecting ? POLLOUT
                 : state_ == State::Securing  ? tls_wants_
                                              : static_cast<short>(POLLIN | (out_.empty() ? 0 : POLLOUT));
  }
  // Decrypted bytes already inside OpenSSL are invisible to poll(2).
  if (tls_ && !connecting && tls_->pending_input() > 0) timeout_ms = 0;
  int rc;
  if (timeout_ms == 0 && fd_ >= 0 && !connecting) {
    // Nothing to wait for: read at once. An empty socket answers EAGAIN for
    // the price of the poll(2) this skips, and a caller that polls many
    // clients itself (perf sub --connections) calls us only when readable.
    pfd.revents = POLLIN;
    rc = 1;
  } else {
    rc = ::poll(&pfd, fd_ >= 0 ? 1 : 0, timeout_ms);
  }
  if (rc <= 0) return 0;

  int delivered = 0;
  if (state_ == State::Connecting) {
    on_writable();
  } else if (state_ == State::Securing) {
    advance_tls();
  } else {
    if (pfd.revents & (POLLIN | POLLERR | POLLHUP)) delivered += on_readable();
    if (fd_ >= 0 && !out_.empty()) write_some();
  }
  return delivered;
}

void Client::on_writable() {
  Status done = finish_connect(fd_);
  if (!done) {
    attempt_failed(done.error().message, monotonic_ns());
    return;
  }
  reached_ = true;
  if (!tls_context_) return send_hello();
  auto tls = session::TlsTransport::connect(*tls_context_, fd_, servers_[current_server_].first, tls_resume_.get());
  if (!tls) {
    fd_ = -1;  // closed by the failed transport
    attempt_failed(tls.error().message, monotonic_ns());
    return;
  }
  tls_ = std::move(*tls);
  state_ = State::Securing;
  advance_tls();
}

// One handshake step per readiness event; HELLO follows once it is done.
void Client::advance_tls() {
  switch (tls_->handshake()) {
    case session::Handshake::Done: return send_hello();
    case session::Handshake::WantRead: tls_wants_ = POLLIN; return;
    case session::Handshake::WantWrite: tls_wants_ = POLLOUT; return;
    case session::Handshake::Failed:
      attempt_failed("TLS handshake failed: " + tls_->error_text(), monotonic_ns());
      return;
  }
}

void Client::send_hello() {
  state_ = State::Handshake;
  last_recv_ns_ = last_send_ns_ = monotonic_ns();
  wire::Hello hello;
  hello.max_version = options_.protocol_version;
  hello.heartbeat_ms = options_.heartbeat_ms;
  hello.client_name = options_.client_name;
  hello.credentials = !options_.user.empty();
  hello.user = options_.user;
  hello.password = options_.password;
  queue_frame(wire::kHeaderSize + 14 + hello.client_name.size() + hello.user.size() + hello.password.size(),
              [&](std::span<uint8_t> out) { return wire::encode(out, hello); });
  write_some();
}

int Client::on_readable() {
  int delivered = 0;
  uint64_t epoch = epoch_;
  for (int i = 0; i < kMaxReadsPerTurn && epoch == epoch_; ++i) {
    std::span<uint8_t> room = in_.writable();
    if (room.empty()) break;  // cannot happen: process_input leaves room for a max frame
    ssize_t n = receive(room);
    if (n == 0) {
      connection_lost("broker closed the connection");
      break;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) connection_lost(io_failure());
      break;
    }
    in_.commit(static_cast<size_t>(n));
    counters_.bytes_in += static_cast<uint64_t>(n);
    last_recv_ns_ = monotonic_ns();
    delivered += process_input();
    // A short plain read drained the socket: skip the EAGAIN read. A TLS read
    // stops when OpenSSL holds nothing more; bytes left inside it make no fd
    // readable, so a caller waiting on the fd (perf sub --connections) would
    // leave them there until more data came: read on while it holds some.
    if (tls_ ? tls_->pending_input() == 0 : static_cast<size_t>(n) < room.size()) break;
  }
  return delivered;
}

size_t Client::buffered_input() const { return tls_ ? tls_->pending_input() : 0; }

// recv(2) semantics over either transport: bytes, 0 at the end, -1 with errno.
ssize_t Client::receive(std::span<uint8_t> room) {
  if (!tls_) return ::recv(fd_, room.data(), room.size(), MSG_DONTWAIT);
  session::ReadResult got = tls_->read(room);
  switch (got.status) {
    case session::ReadStatus::Data: return static_cast<ssize_t>(got.bytes);
    case session::ReadStatus::Closed: return 0;
    case session::ReadStatus::Again: errno = EAGAIN; return -1;
    case session::ReadStatus::Error: break;
  }
  errno = EPROTO;
  return -1;
}

// send(2) semantics: with TLS, only bytes whose records reached the socket
// count as sent; the rest stay in out_ and are offered again.
ssize_t Client::send_bytes(std::span<const uint8_t> data) {
  if (!tls_) return ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  iovec iov{const_cast<uint8_t*>(data.data()), data.size()};
  ssize_t n = tls_->writev(&iov, 1);
  if (n == 0 && !data.empty()) errno = EAGAIN;
  if (n < 0) errno = EPROTO;
  return n == 0 && !data.empty() ? -1 : n;
}

// Why the last receive or send failed: OpenSSL's reason with TLS, else errno's.
std::string Client::io_failure() const {
  if (tls_ && !tls_->error_text().empty()) return "TLS: " + tls_->error_text();
  return std::strerror(errno);
}

bool Client::write_some() {
  std::span<const uint8_t> data = out_.readable();
  ssize_t n = send_bytes(data);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return true;
    connection_lost(io_failure());
    return false;
  }
  out_.consume(static_cast<size_t>(n));
  counters_.bytes_out += static_cast<uint64_t>(n);
  last_send_ns_ = monotonic_ns();
  return true;
}

void Client::drain_output(uint32_t linger_ms) {
  uint64_t deadline = monotonic_ns() + uint64_t{linger_ms} * kNsPerMs;
  while (fd_ >= 0 && !out_.empty()) {
    if (!write_some() || out_.empty()) break;
    uint64_t now = monotonic_ns();
    if (now >= deadline) break;
    pollfd pfd{fd_, POLLOUT, 0};
    ::poll(&pfd, 1, static_cast<int>((deadline - now) / kNsPerMs) + 1);
  }
}

}  // namespace tw::client
