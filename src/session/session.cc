#include "session/session.h"

#include <sys/epoll.h>

#include <algorithm>
#include <utility>

#include "base/log.h"
#include "base/rate_limit.h"

namespace tw::session {

namespace {
constexpr uint64_t kReleaseIdleNs = 100'000'000;  // quiet this long: the empty buffer is freed
constexpr size_t kPaceBelow = 256 * 1024;         // a paced reply produces more below this much output
constexpr size_t kGoodbyeMax = 512;
uint64_t ms_to_ns(uint64_t ms) { return ms * 1'000'000ull; }
}  // namespace

Session::Session(Env env, std::unique_ptr<Transport> transport, std::string peer, const Encoder& encoder,
                 uint64_t now_ns)
    : env_(env),
      transport_(std::move(transport)),
      peer_(std::move(peer)),
      name_("?@" + peer_),
      tick_(env.loop.ticks, *this),
      output_(env.fanout, *this),
      policy_({env.config.limits.max_output_buffer, env.router, env.counters, env.reactor}, output_, encoder, *this),
      opened_ns_(now_ns),
      last_rx_ns_(now_ns),
      last_tx_ns_(now_ns) {}

Session::~Session() { env_.loop.input.set(*this, 0); }

void Session::tick_due(LoopState& loop, uint64_t now_ns) {
  loop.ticks.visit_due(now_ns, [now_ns](Session& session) { session.on_tick(now_ns); });
}

// The earliest time the tick has work here if nothing else happens: every
// event that could bring it closer (input, output, a delivery, a pause)
// wakes the session for the next tick instead (wake_tick).
uint64_t Session::next_tick_due_ns() const {
  if (closing()) return ~uint64_t{0};
  if (policy_.needs_tick() || !output_.empty() || paced_) return 0;
  if (login_.pending() || holds_hello()) return 0;  // the verifier's answer (or what holds the hello) is polled every tick
  if (phase_ == Phase::AwaitHello) return opened_ns_ + ms_to_ns(env_.config.hello_timeout_ms) + 1;
  uint64_t due = open_tick_due_ns();
  if (due == 0) return 0;
  if (reads()) due = std::min(due, last_rx_ns_ + idle_timeout_ns_ + 1);
  if (in_.frame_started_ns() != 0) due = std::min(due, in_.frame_started_ns() + ms_to_ns(env_.config.frame_deadline_ms) + 1);
  if (in_.capacity() != 0) due = std::min(due, last_rx_ns_ + kReleaseIdleNs);
  return due;
}

void Session::start() {
  if (transport_->pending_input() > 0) read_input();
}

void Session::on_io(uint32_t events) {
  env_.reactor.check_owner("Session");
  wake_tick();
  if (events & EPOLLOUT) flush_output();
  if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) read_input();
}

void Session::read_input() {
  // A TLS transport may hold decrypted bytes that no readiness event announces.
  do {
    if (!reads() || closing()) return;
    read_once();
  } while (transport_->pending_input() > 0);
}

// One read into the loop's shared buffer. Whole frames are parsed where they
// landed; only a partial frame is copied into the session's own buffer.
void Session::read_once() {
  std::vector<uint8_t>& buffer = env_.loop.read_buffer;
  ReadResult got = transport_->read({buffer.data(), buffer.size()});
  if (got.status == ReadStatus::Again) return;
  if (got.status == ReadStatus::Closed) return fail(wire::Code::Ok, "peer closed the connection");
  if (got.status == ReadStatus::Error) return fail(wire::Code::Ok, "read error");
  env_.counters.bytes_in += got.bytes;
  usage_.read(got.bytes);
  last_rx_ns_ = env_.reactor.now_ns();
  const std::span<const uint8_t> arrived(buffer.data(), got.bytes);
  if (in_.empty()) {
    const size_t used = parse_counted(arrived);
    return keep_unparsed(arrived.subspan(used), used > 0);
  }
  in_.append(arrived);  // the rest of a partial frame
  parse_input();
}

size_t Session::parse_counted(std::span<const uint8_t> in) {
  const uint64_t before = env_.counters.frames_in;
  const size_t used = parse(in);
  usage_.parsed(env_.counters.frames_in - before);
  return used;
}

void Session::parse_input() {
  const std::span<const uint8_t> held = in_.bytes();
  const size_t used = parse_counted(held);
  keep_unparsed(held.subspan(used), used > 0);
}

void Session::keep_unparsed(std::span<const uint8_t> rest, bool frame_completed) {
  if (closing()) return;  // finish() frees the buffer; handlers may still hold views into it now
  in_.keep(rest, frame_completed, env_.reactor.now_ns());
  if (in_.capacity() == held_bytes()) return;
  env_.loop.input.set(*this, in_.capacity());
  env_.loop.input.enforce();
  env_.counters.partial_input_bytes = env_.loop.input.held();
}

void Session::release_input() {
  in_.release();
  env_.loop.input.set(*this, 0);
  env_.counters.partial_input_bytes = env_.loop.input.held();
}

// The loop's partial frames passed max_partial_input and this session holds
// the most: an empty buffer is simply freed; a partial frame closes the connection.
void Session::give_up_input() {
  const bool partial = !in_.empty();
  release_input();
  if (!partial || closing()) return;
  ++env_.counters.partial_input_closes;
  fail(wire::Code::FrameTooLarge, "the broker's memory for partial frames (max_partial_input) is full and this "
                                  "connection held the largest one", true);
}

bool Session::output_has_room() const {
  return queued_output() < std::min<uint64_t>(kPaceBelow, env_.config.limits.max_output_buffer / 2);
}

void Session::begin_paced() {
  if (paced_) return;
  paced_ = true;
  wake_tick();
  list_paced();
  update_interest();
}

void Session::end_paced() {
  if (!paced_) return;
  paced_ = false;
  wake_tick();
  last_rx_ns_ = env_.reactor.now_ns();  // the idle clock stood still meanwhile, as when paused
  update_interest();
  if (!in_.empty()) parse_input();  // the requests that arrived behind the paced one
}

void Session::list_paced() {
  if (paced_listed_) return;
  paced_listed_ = true;
  env_.loop.paced.push_back(this);
}

void Session::pace_all(LoopState& loop) {
  if (loop.paced.empty()) return;
  loop.pacing.swap(loop.paced);
  for (Session* s : loop.pacing) s->paced_listed_ = false;
  for (Session* s : loop.pacing) {
    if (s->closing()) continue;
    s->pace();
    if (s->paced_ && !s->closing()) s->list_paced();
  }
  loop.pacing.clear();
}

bool Session::pacing_ready(const LoopState& loop) {
  for (const Session* s : loop.paced) {
    if (!s->closing() && s->output_has_room() && s->can_pace()) return true;
  }
  return false;
}

void Session::open(std::string_view client_name, uint64_t idle_timeout_ns) {
  client_name_ = std::string(client_name);
  name_ = client_name_ + "@" + peer_;
  idle_timeout_ns_ = idle_timeout_ns;
  phase_ = Phase::Open;
  if (grants_) usage_.logged_in();
}

void Session::send_image(const cache::Channel& channel, uint32_t request_id) {
  wake_tick();
  if (!closing()) apply(policy_.send_image(channel, request_id));
}

void Session::send_stream_image(const cache::Channel& channel, broker::SlowPolicy policy) {
  send_stream_image_as(channel, policy, Copy{});
}

void Session::send_stream_image_as(const cache::Channel& channel, broker::SlowPolicy policy, Copy copy) {
  wake_tick();
  if (closing()) return;
  usage_.offered(/*starts_stream=*/true);
  apply(policy_.send_stream_image(channel, policy, copy));
}

void Session::send_delivery(const broker::Delivery& delivery) { send_delivery_as(delivery, Copy{}); }

void Session::send_delivery_as(const broker::Delivery& delivery, Copy copy) {
  wake_tick();
  if (closing()) return;
  usage_.offered(/*starts_stream=*/false);
  apply(policy_.send_delivery(delivery, copy));
}

void Session::send_status(const cache::Channel& channel, wire::ChannelState state, wire::Code code,
                          std::string_view text, bool introduce) {
  wake_tick();
  if (!closing()) policy_.send_status(channel, state, code, text, introduce);
}

void Session::apply(DeliveryPolicy::Verdict verdict) {
  if (verdict != DeliveryPolicy::Verdict::SlowConsumer) return;
  ++env_.counters.slow_consumers;
  fail(wire::Code::SlowConsumer, "output buffer limit exceeded");
}

namespace {
// Takes nothing: a held connection's queue copies this turn's frames into its
// own backlog, so the arena and the tier rings they point into can be reused.
class HoldWriter final : public io::Writer {
 public:
  ssize_t writev(const iovec*, int) override { return 0; }
};
}  // namespace

void Session::settle(std::span<const std::string_view> patterns) {
  if (env_.router.settle(this, patterns, ++settle_ids_).pending) ++unsettled_;
}

void Session::settled() {
  if (unsettled_ == 0 || --unsettled_ > 0) return;
  on_settled();
  flush_output();
}

void Session::flush_output() {
  if (!transport_) return;
  if (unsettled_ > 0 && !closing()) {
    HoldWriter hold;
    output_.queue().flush(hold);
    want_write_ = false;  // settled() writes it
    update_interest();
    return;
  }
  io::FlushResult result = output_.queue().flush(*transport_);
  account_written();
  // A slow consumer that drained to the low-water mark resumes its held-back
  // channels; loop, because the socket may take everything resumed at once.
  while (result != io::FlushResult::Error && policy_.resume()) {
    result = output_.queue().flush(*transport_);
    account_written();
  }
  if (result == io::FlushResult::Error) return fail(wire::Code::Ok, "write error");
  want_write_ = result == io::FlushResult::Pending;
  update_interest();
}

void Session::account_written() {
  uint64_t written = output_.queue().bytes_written();
  if (written != bytes_written_seen_) {
    env_.counters.bytes_out += written - bytes_written_seen_;
    usage_.written(written - bytes_written_seen_);
    bytes_written_seen_ = written;
    last_tx_ns_ = env_.reactor.now_ns();
  }
}

void Session::update_interest() {
  if (closing()) return;
  uint32_t events = (reads() ? uint32_t{EPOLLIN} : 0u) | (want_write_ ? uint32_t{EPOLLOUT} : 0u);
  if (events == interest_) return;  // epoll_ctl only on a change, never per flush
  interest_ = events;
  (void)env_.reactor.modify(transport_->fd(), events, this);
}

void Session::pause_input(bool paused) {
  // While the broker does not read, the peer's heartbeats wait unread in the
  // socket: that silence is ours, so the idle clock restarts on resume.
  if (!paused && !reading_) last_rx_ns_ = env_.reactor.now_ns();
  reading_ = !paused;
  wake_tick();
  update_interest();
}

void Session::fail(wire::Code code, std::string_view text, bool warn) {
  if (closing()) return;
  phase_ = Phase::Closing;
  env_.loop.closing.push_back(this);
  close_code_ = code;
  close_text_ = std::string(text);
  if (code == wire::Code::AuthFailed) {
    // auth::Authority logs failed logins, rate-limited: one line per client here would flood.
    TW_DEBUG("session %s disconnected: %s", peer_.c_str(), close_text_.c_str());
  } else if (code != wire::Code::Ok) {
    TW_WARN_LIMITED("session %s ('%s') disconnected: %s: %s", peer_.c_str(), client_name_.c_str(),
                    wire::code_name(code), close_text_.c_str());
  } else if (warn) {
    TW_WARN_LIMITED("session %s closed: %s", peer_.c_str(), close_text_.c_str());
  } else {
    TW_DEBUG("session %s ('%s') closed: %s", peer_.c_str(), client_name_.c_str(), close_text_.c_str());
  }
}

void Session::finish() {
  if (!transport_) return;
  release_input();
  on_finish();
  const auto& slow = policy_.stats();
  if (slow.conflated_channels != 0 || slow.dropped_messages != 0) {
    TW_INFO("session %s ('%s') was a slow consumer: %lu conflation episodes (a channel held back once), %lu refresh "
            "images, %lu messages dropped",
            peer_.c_str(), client_name_.c_str(), static_cast<unsigned long>(slow.conflated_channels),
            static_cast<unsigned long>(slow.refresh_images), static_cast<unsigned long>(slow.dropped_messages));
  }
  env_.reactor.remove(transport_->fd());
  // One last non-blocking write. The goodbye can only follow a message
  // boundary, so a connection whose queue did not drain (a slow consumer)
  // is closed without it.
  (void)output_.queue().flush(*transport_);
  if (close_code_ != wire::Code::Ok && output_.empty()) {
    uint8_t buf[kGoodbyeMax];
    if (size_t n = encode_goodbye({buf, sizeof buf}, close_code_, close_text_); n > 0) {
      iovec iov{buf, n};
      (void)transport_->writev(&iov, 1);  // best effort: the peer may already be gone
    }
  }
  transport_->shutdown();
  transport_.reset();
}

void Session::on_tick(uint64_t now_ns) {
  env_.reactor.check_owner("Session");
  tick_checks(now_ns);
  tick_.set_due_ns(next_tick_due_ns());
}

void Session::tick_checks(uint64_t now_ns) {
  if (closing()) return;
  if (!tick_input(now_ns)) return;
  if (phase_ == Phase::AwaitHello) {
    if (login_.pending()) return poll_login();  // bounded by the verifier, not by hello_timeout_ms
    if (holds_hello()) return poll_held_hello(now_ns);  // bounded by the protocol's own wait
    if (now_ns - opened_ns_ > ms_to_ns(env_.config.hello_timeout_ms)) {
      ++env_.counters.idle_timeouts;
      fail(wire::Code::IdleTimeout, "no HELLO received in time");
    }
    return;
  }
  if (reads() && now_ns - last_rx_ns_ > idle_timeout_ns_) {
    ++env_.counters.idle_timeouts;
    return fail(wire::Code::IdleTimeout, "nothing received within the idle timeout");
  }
  apply(policy_.send_due_refreshes(now_ns));
  if (!closing()) on_open_tick(now_ns);
}

// The input's part of the tick: a frame begun too long ago closes the
// connection (a client trickling one byte at a time would otherwise hold it
// open for ever, every byte resetting the idle clock); a buffer left empty
// by a quiet connection is freed. False once the session is closing.
bool Session::tick_input(uint64_t now_ns) {
  if (in_.frame_started_ns() != 0 && reads() &&
      now_ns - in_.frame_started_ns() > ms_to_ns(env_.config.frame_deadline_ms)) {
    ++env_.counters.frame_deadline_closes;
    fail(wire::Code::IdleTimeout, "a frame was not whole within frame_deadline_ms of its first byte", true);
    return false;
  }
  if (in_.empty() && in_.capacity() != 0 && now_ns - last_rx_ns_ >= kReleaseIdleNs) release_input();
  return true;
}

void Session::begin_login(std::string_view user, std::string_view password) {
  login_.begin(*env_.authority, user, password, peer_);
  pause_input(true);
}

void Session::poll_login() {
  std::optional<LoginHandoff::Answer> answer = login_.poll(*env_.authority);
  if (!answer) return;
  on_login(std::move(answer->grants), answer->error);
  if (closing() || holds_hello()) return;
  resume_input();
}

void Session::resume_input() {
  pause_input(false);
  parse_input();  // frames that came behind the hello
  read_input();
}

broker::Outcome Session::advertise(std::string_view topic, wire::PayloadKind kind, cache::ChannelId& id) {
  broker::Advertiser by = channel_quota_.ask(this, env_.config.limits, grants_.get(), env_.authority);
  broker::Outcome outcome = env_.router.advertise(topic, kind, id, &by);
  const bool users_bound = channel_quota_.settle(by);
  if (outcome.code == wire::Code::ChannelQuota) {
    ++(users_bound ? env_.counters.user_channel_quota_hits : env_.counters.channel_quota_hits);
  }
  return outcome;
}

void Session::reentitle() {
  if (!grants_ || closing()) return;
  std::shared_ptr<const auth::Grants> now = env_.authority->refresh(*grants_);
  if (!now) return fail(wire::Code::NotAuthorized, "the user was removed from the users file");
  std::shared_ptr<const auth::Grants> before = std::exchange(grants_, std::move(now));
  if (is_open()) {
    env_.router.reentitle(this, [&](std::string_view topic, uint32_t delay_ms) { return before->receives(topic, delay_ms); });
    on_reentitled();
  }
}

}  // namespace tw::session
