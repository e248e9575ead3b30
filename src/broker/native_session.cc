#include "broker/native_session.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/clock.h"
#include "base/log.h"
#include "io/socket.h"

namespace tw::broker {

namespace {
constexpr size_t kInitialInput = 64 * 1024;
constexpr size_t kControlFrameMax = wire::kHeaderSize + 16 + 2 + 0xFFFF;  // largest str16 frame
constexpr uint32_t kMinHeartbeatMs = 100;
constexpr uint32_t kMaxHeartbeatMs = 600'000;
uint64_t ms_to_ns(uint64_t ms) { return ms * 1'000'000ull; }
}  // namespace

NativeSession::NativeSession(Env env, std::unique_ptr<session::Transport> transport, std::string peer,
                             uint64_t now_ns)
    : env_(env),
      transport_(std::move(transport)),
      peer_(std::move(peer)),
      name_("?@" + peer_),
      opened_ns_(now_ns),
      last_rx_ns_(now_ns),
      last_tx_ns_(now_ns) {
  in_.resize(std::min<size_t>(kInitialInput, env_.config.limits.max_frame));
  // Plain TCP is ready at once; a TLS handshake starts by waiting for the
  // client's hello (the broker registers the fd for EPOLLIN).
  handshaken_ = transport_->handshake() == session::Handshake::Done;
  if (!handshaken_) handshake_events_ = EPOLLIN;
}

NativeSession::~NativeSession() = default;

void NativeSession::on_io(uint32_t events) {
  env_.reactor.check_owner("NativeSession");
  if (!handshaken_) return advance_handshake();
  if (events & EPOLLOUT) flush_output();
  if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) read_input();
}

void NativeSession::advance_handshake() {
  if (closing()) return;
  switch (transport_->handshake()) {
    case session::Handshake::Done:
      handshaken_ = true;
      handshake_events_ = 0;
      update_interest();
      if (!out_.empty()) flush_output();
      return read_input();  // the handshake may have read application bytes already
    case session::Handshake::WantRead: handshake_events_ = EPOLLIN; break;
    case session::Handshake::WantWrite: handshake_events_ = EPOLLOUT; break;
    case session::Handshake::Failed:
      return fail(wire::Code::Ok, std::string(transport_->kind()) + " handshake failed: " + transport_->error_text(),
                  true);
  }
  update_interest();
}

void NativeSession::read_input() {
  do {
    if (!reading_ || closing()) return;
    read_once();
  } while (transport_->pending_input() > 0);
}

void NativeSession::read_once() {
  if (in_len_ == in_.size()) {
    // A frame larger than the buffer but within max_frame: grow to fit it.
    uint32_t need = wire::peek_length({in_.data(), in_len_});
    in_.resize(std::max<size_t>(need, in_.size() * 2));
  }
  session::ReadResult got = transport_->read({in_.data() + in_len_, in_.size() - in_len_});
  if (got.status == session::ReadStatus::Again) return;
  if (got.status == session::ReadStatus::Closed) return fail(wire::Code::Ok, "peer closed the connection");
  if (got.status == session::ReadStatus::Error) return fail(wire::Code::Ok, "read error");
  in_len_ += got.bytes;
  env_.counters.bytes_in += got.bytes;
  last_rx_ns_ = env_.reactor.now_ns();
  parse_input();
}

void NativeSession::parse_input() {
  size_t pos = 0;
  while (!closing()) {
    wire::Frame frame;
    auto result = wire::split_frame({in_.data() + pos, in_len_ - pos}, env_.config.limits.max_frame, frame);
    if (result == wire::SplitResult::NeedMore) break;
    if (result == wire::SplitResult::Malformed) {
      ++env_.counters.protocol_errors;
      fail(wire::Code::MalformedFrame, "malformed frame header");
      return;
    }
    if (result == wire::SplitResult::TooLarge) {
      ++env_.counters.protocol_errors;
      fail(wire::Code::FrameTooLarge, "frame larger than max_frame");
      return;
    }
    ++env_.counters.frames_in;
    handle(frame);
    pos += frame.size;
  }
  if (pos > 0) {
    std::memmove(in_.data(), in_.data() + pos, in_len_ - pos);
    in_len_ -= pos;
  }
}

// The one dispatch switch of the native protocol.
void NativeSession::handle(const wire::Frame& frame) {
  using wire::MsgType;
  if (phase_ == Phase::AwaitHello) {
    if (frame.type == MsgType::Hello) return handle_hello(frame);
    ++env_.counters.protocol_errors;
    return fail(wire::Code::HelloExpected, "the first frame must be HELLO");
  }
  switch (frame.type) {
    case MsgType::Publish: return handle_publish(frame);
    case MsgType::Heartbeat:
      if (!frame.body.empty() || frame.flags != 0) break;
      return;
    case MsgType::Subscribe: return handle_subscribe(frame, true);
    case MsgType::Unsubscribe: return handle_subscribe(frame, false);
    case MsgType::Snapshot: return handle_snapshot(frame);
    case MsgType::Register: return handle_register(frame);
    case MsgType::Provide: return handle_provide(frame, true);
    case MsgType::Withdraw: return handle_provide(frame, false);
    case MsgType::StreamStatus: return handle_stream_status(frame);
    case MsgType::ListChannels: return handle_list_channels(frame);
    case MsgType::Hello:
      ++env_.counters.protocol_errors;
      return fail(wire::Code::MalformedFrame, "HELLO sent twice");
    default:
      ++env_.counters.protocol_errors;
      return fail(wire::Code::UnknownType, "unknown or broker-only frame type");
  }
  ++env_.counters.protocol_errors;
  fail(wire::Code::MalformedFrame, "malformed HEARTBEAT");
}

void NativeSession::handle_hello(const wire::Frame& frame) {
  wire::Hello hello;
  if (!wire::decode(frame, hello)) {
    ++env_.counters.protocol_errors;
    return fail(wire::Code::MalformedFrame, "malformed HELLO");
  }
  if (hello.min_version > wire::kProtocolVersion || hello.max_version < wire::kProtocolVersion) {
    return fail(wire::Code::UnsupportedVersion, "this broker speaks protocol version 1 only");
  }
  client_name_ = std::string(hello.client_name);
  name_ = client_name_ + "@" + peer_;
  heartbeat_ms_ = hello.heartbeat_ms ? std::clamp(hello.heartbeat_ms, kMinHeartbeatMs, kMaxHeartbeatMs)
                                     : env_.config.heartbeat_ms;
  idle_timeout_ns_ = ms_to_ns(std::max<uint64_t>(env_.config.idle_timeout_ms, 3ull * heartbeat_ms_));
  phase_ = Phase::Open;
  const auto& cfg = env_.config;
  wire::Welcome welcome{wire::kProtocolVersion, heartbeat_ms_, cfg.limits.max_frame, cfg.limits.max_subscriptions,
                        cfg.server_name};
  queue_frame(kControlFrameMax, [&](std::span<uint8_t> out) { return wire::encode(out, welcome); });
  TW_DEBUG("session %s: HELLO from '%s', heartbeat %u ms", peer_.c_str(), client_name_.c_str(), heartbeat_ms_);
}

void NativeSession::handle_subscribe(const wire::Frame& frame, bool subscribe) {
  wire::Subscribe msg;
  if (!wire::decode(frame, msg)) {
    ++env_.counters.protocol_errors;
    return fail(wire::Code::MalformedFrame, subscribe ? "malformed SUBSCRIBE" : "malformed UNSUBSCRIBE");
  }
  if (!subscribe) return send_ack(msg.request_id, env_.router.unsubscribe(this, msg.pattern));
  // The ACK goes first: the images that follow belong to an accepted subscription.
  Outcome check = env_.router.check_subscribe(this, msg.pattern, msg.delay_ms);
  send_ack(msg.request_id, check);
  if (check.code == wire::Code::TooManySubscriptions) {
    ++env_.counters.subscription_limit_hits;
    ++env_.counters.protocol_errors;
    return fail(check.code, check.detail);
  }
  if (check.ok()) env_.router.subscribe(this, msg.pattern, msg.policy, msg.conflate_ms, msg.delay_ms);
}

void NativeSession::handle_snapshot(const wire::Frame& frame) {
  wire::Snapshot msg;
  if (!wire::decode(frame, msg)) {
    ++env_.counters.protocol_errors;
    return fail(wire::Code::MalformedFrame, "malformed SNAPSHOT");
  }
  send_ack(msg.request_id, env_.router.snapshot(this, msg.topic, msg.request_id));
}

void NativeSession::handle_register(const wire::Frame& frame) {
  wire::Register msg;
  if (!wire::decode(frame, msg) || msg.publish_id == 0) {
    ++env_.counters.protocol_errors;
    return fail(wire::Code::MalformedFrame, "malformed REGISTER");
  }
  if (msg.publish_id >= wire::kStreamIdBit) {
    ++env_.counters.protocol_errors;
    return fail(wire::Code::MalformedFrame, "REGISTER with a stream id (top bit set)");
  }
  if (msg.publish_id > env_.config.limits.max_registrations) {
    ++env_.counters.protocol_errors;
    return fail(wire::Code::TooManyRegistrations, "publish id above max_registrations");
  }
  cache::ChannelId id = 0;
  Outcome outcome = env_.router.advertise(msg.topic, msg.kind, id);
  if (!outcome.ok()) {
    ++env_.counters.protocol_errors;
    return fail(outcome.code, outcome.detail);
  }
  if (publish_ids_.size() <= msg.publish_id) publish_ids_.resize(msg.publish_id + 1, 0);
  publish_ids_[msg.publish_id] = id;
}

void NativeSession::handle_publish(const wire::Frame& frame) {
  wire::Publish msg;
  if (!wire::decode(frame, msg)) {
    ++env_.counters.protocol_errors;
    return fail(wire::Code::MalformedFrame, "malformed PUBLISH");
  }
  if (msg.publish_id & wire::kStreamIdBit) {
    Outcome outcome = env_.router.provider_publish(this, msg.publish_id & ~wire::kStreamIdBit, msg.payload, msg.image);
    if (outcome.code == wire::Code::BadPayload) {
      ++env_.counters.protocol_errors;
      return fail(outcome.code, outcome.detail);
    }
    return note_stray(outcome);
  }
  if (msg.publish_id >= publish_ids_.size() || publish_ids_[msg.publish_id] == 0) {
    ++env_.counters.protocol_errors;
    return fail(wire::Code::UnknownPublishId, "PUBLISH with a publish id that was never registered");
  }
  // Delivered frames are up to 12 bytes longer than this PUBLISH; keep them within max_frame.
  if (frame.size + (wire::kImageFixedSize - wire::kPublishFixedSize) > env_.config.limits.max_frame) {
    ++env_.counters.protocol_errors;
    return fail(wire::Code::FrameTooLarge, "payload too large to deliver within max_frame");
  }
  Outcome outcome = env_.router.publish(publish_ids_[msg.publish_id], msg.payload, msg.image);
  if (!outcome.ok()) {
    ++env_.counters.protocol_errors;
    fail(outcome.code, outcome.detail);
  }
}

void NativeSession::handle_provide(const wire::Frame& frame, bool provide) {
  wire::Provide msg;
  bool ok = false;
  if (provide) {
    ok = wire::decode(frame, msg);
  } else {
    wire::Withdraw w;
    ok = wire::decode(frame, w);
    msg.request_id = w.request_id;
    msg.service = w.service;
  }
  if (!ok) {
    ++env_.counters.protocol_errors;
    return fail(wire::Code::MalformedFrame, provide ? "malformed PROVIDE" : "malformed WITHDRAW");
  }
  Outcome outcome = provide ? env_.router.provide(this, msg.service, msg.pattern)
                            : env_.router.withdraw(this, msg.service);
  send_ack(msg.request_id, outcome);
  if (outcome.ok()) {
    TW_INFO("%s %s service %.*s", name_.c_str(), provide ? "provides" : "withdrew", static_cast<int>(msg.service.size()),
            msg.service.data());
  }
}

void NativeSession::handle_stream_status(const wire::Frame& frame) {
  wire::StreamStatus msg;
  if (!wire::decode(frame, msg) || !(msg.stream_id & wire::kStreamIdBit)) {
    ++env_.counters.protocol_errors;
    return fail(wire::Code::MalformedFrame, "malformed STREAM_STATUS");
  }
  note_stray(env_.router.provider_status(this, msg.stream_id & ~wire::kStreamIdBit, msg.state, msg.code, msg.text));
}

void NativeSession::handle_list_channels(const wire::Frame& frame) {
  wire::ListChannels msg;
  if (!wire::decode(frame, msg)) {
    ++env_.counters.protocol_errors;
    return fail(wire::Code::MalformedFrame, "malformed LIST_CHANNELS");
  }
  send_ack(msg.request_id, env_.router.list_channels(this, msg.service, msg.request_id));
}

void NativeSession::note_stray(const Outcome& outcome) {
  if (outcome.ok()) return;
  ++env_.counters.stray_provider_messages;
  if (stray_logged_) return;
  stray_logged_ = true;
  TW_WARN("provider %s: %s (ignored; further ones are counted, not logged)", name_.c_str(), outcome.detail);
}

void NativeSession::send_intro(const cache::Channel& channel) {
  wire::ChannelIntro intro{channel.id, channel.kind, channel.topic};
  queue_frame(kControlFrameMax, [&](std::span<uint8_t> out) { return wire::encode(out, intro); });
}

void NativeSession::send_status(const cache::Channel& channel, wire::ChannelState state, wire::Code code,
                                std::string_view text, bool introduce) {
  if (closing()) return;
  if (introduce) send_intro(channel);
  wire::StatusMsg status{channel.id, state, code, text};
  queue_frame(kControlFrameMax, [&](std::span<uint8_t> out) { return wire::encode(out, status); });
}

void NativeSession::send_request(uint32_t stream_id, std::string_view topic) {
  if (closing()) return;
  wire::Request request{stream_id, topic};
  queue_frame(kControlFrameMax, [&](std::span<uint8_t> out) { return wire::encode(out, request); });
}

void NativeSession::send_release(uint32_t stream_id) {
  if (closing()) return;
  wire::ReleaseMsg release{stream_id};
  queue_frame(kControlFrameMax, [&](std::span<uint8_t> out) { return wire::encode(out, release); });
}

void NativeSession::send_channel_info(const wire::ChannelInfo& info) {
  if (closing()) return;
  queue_frame(kControlFrameMax * 2, [&](std::span<uint8_t> out) { return wire::encode(out, info); });
}

void NativeSession::complete_request(uint32_t request_id, const Outcome& outcome) {
  if (!closing()) send_ack(request_id, outcome);
}

void NativeSession::send_ack(uint32_t request_id, const Outcome& outcome) {
  if (outcome.pending) return;  // complete_request sends it
  wire::Ack ack{request_id, outcome.code, outcome.ok() ? std::string_view{} : std::string_view{outcome.detail}};
  queue_frame(kControlFrameMax, [&](std::span<uint8_t> out) { return wire::encode(out, ack); });
}

void NativeSession::forward_frame(std::span<const uint8_t> frame) {
  if (closing()) return;
  out_.append_ref(frame);
  env_.fanout.mark_dirty(this);
}

template <typename Encode>
void NativeSession::queue_frame(size_t max_size, Encode&& encode) {
  auto space = env_.fanout.reserve(max_size);
  size_t n = encode(space);
  if (n == 0) return;  // cannot happen for control frames within kControlFrameMax
  out_.append_ref(env_.fanout.commit(n));
  env_.fanout.mark_dirty(this);
}

void NativeSession::queue_image(const cache::Channel& channel, uint32_t request_id) {
  // Images are not the hot path: each subscriber gets its own copy, which
  // keeps the topic introduction and the image adjacent in its queue.
  send_intro(channel);
  size_t size = wire::kImageFixedSize + channel.image_size();
  auto encode_image = [&](std::span<uint8_t> out) -> size_t {
    if (out.size() < size) return 0;
    size_t payload = channel.encode_image(out.subspan(wire::kImageFixedSize));
    wire::encode_image_prefix(out, channel.id, channel.seq, request_id, payload);
    return wire::kImageFixedSize + payload;
  };
  if (size <= env_.fanout.arena_capacity()) {
    queue_frame(size, encode_image);
  } else {
    std::vector<uint8_t> big(size);
    size_t n = encode_image(big);
    out_.append_copy({big.data(), n});
    env_.fanout.mark_dirty(this);
  }
}

void NativeSession::flush_output() {
  if (!transport_) return;
  auto result = out_.flush(*transport_);
  account_written();
  // A slow consumer that drained to the low-water mark resumes its held-back
  // channels; loop, because the socket may take everything resumed at once.
  const size_t low_water = env_.config.limits.max_output_buffer / 2;
  while (result != io::FlushResult::Error && (congested_ || !lag_.empty()) && out_.queued_bytes() <= low_water) {
    congested_ = false;
    if (lag_.empty()) break;
    resume_lagging();  // sends at least one held-back channel: the loop ends
    result = out_.flush(*transport_);
    account_written();
  }
  if (result == io::FlushResult::Error) {
    fail(wire::Code::Ok, "write error");
    return;
  }
  want_write_ = result == io::FlushResult::Pending;
  update_interest();
}

void NativeSession::account_written() {
  uint64_t written = out_.bytes_written();
  if (written != bytes_written_seen_) {
    env_.counters.bytes_out += written - bytes_written_seen_;
    bytes_written_seen_ = written;
    last_tx_ns_ = env_.reactor.now_ns();
  }
}

void NativeSession::update_interest() {
  if (closing()) return;
  const bool write = want_write_ || transport_->pending_output() > 0;
  uint32_t events = handshaken_ ? (reading_ ? uint32_t{EPOLLIN} : 0u) | (write ? uint32_t{EPOLLOUT} : 0u)
                                : handshake_events_;
  if (events == interest_) return;  // epoll_ctl only on a change, never per flush
  interest_ = events;
  (void)env_.reactor.modify(transport_->fd(), events, this);
}

void NativeSession::pause_input(bool paused) {
  // While the broker does not read, the peer's heartbeats wait unread in the
  // socket: that silence is ours, so the idle clock restarts on resume.
  if (!paused && !reading_) last_rx_ns_ = env_.reactor.now_ns();
  reading_ = !paused;
  update_interest();
}

void NativeSession::fail(wire::Code code, std::string_view text, bool warn) {
  if (closing()) return;
  phase_ = Phase::Closing;
  close_code_ = code;
  close_text_ = std::string(text);
  if (warn && code == wire::Code::Ok) {
    TW_WARN("session %s closed: %s", peer_.c_str(), close_text_.c_str());
  } else if (code == wire::Code::Ok) {
    TW_DEBUG("session %s ('%s') closed: %s", peer_.c_str(), client_name_.c_str(), close_text_.c_str());
  } else {
    TW_WARN("session %s ('%s') disconnected: %s: %s", peer_.c_str(), client_name_.c_str(), wire::code_name(code),
            close_text_.c_str());
  }
}

void NativeSession::finish() {
  if (!transport_) return;
  if (slow_.conflated_channels != 0 || slow_.dropped_messages != 0) {
    TW_INFO("session %s ('%s') was a slow consumer: %lu channels conflated, %lu refresh images, %lu messages dropped",
            peer_.c_str(), client_name_.c_str(), static_cast<unsigned long>(slow_.conflated_channels),
            static_cast<unsigned long>(slow_.refresh_images), static_cast<unsigned long>(slow_.dropped_messages));
  }
  env_.reactor.remove(transport_->fd());
  // One last non-blocking write. The ERROR frame can only follow a frame
  // boundary, so a connection whose queue did not drain (a slow consumer)
  // is closed without it.
  (void)out_.flush(*transport_);
  if (close_code_ != wire::Code::Ok && out_.empty()) {
    uint8_t buf[kControlFrameMax];
    size_t n = wire::encode({buf, sizeof buf}, wire::ErrorMsg{close_code_, close_text_});
    iovec iov{buf, n};
    (void)transport_->writev(&iov, 1);  // best effort: the peer may already be gone
  }
  transport_->shutdown();
  transport_.reset();
}

void NativeSession::on_tick(uint64_t now_ns) {
  env_.reactor.check_owner("NativeSession");
  if (closing()) return;
  if (!handshaken_ && now_ns - opened_ns_ > ms_to_ns(env_.config.handshake_timeout_ms)) {
    ++env_.counters.idle_timeouts;
    return fail(wire::Code::Ok, std::string(transport_->kind()) + " handshake not completed in time", true);
  }
  if (phase_ == Phase::AwaitHello) {
    if (now_ns - opened_ns_ > ms_to_ns(env_.config.hello_timeout_ms)) {
      ++env_.counters.idle_timeouts;
      fail(wire::Code::IdleTimeout, "no HELLO received in time");
    }
    return;
  }
  if (reading_ && now_ns - last_rx_ns_ > idle_timeout_ns_) {
    ++env_.counters.idle_timeouts;
    return fail(wire::Code::IdleTimeout, "nothing received within the idle timeout");
  }
  if (!conflated_.empty()) send_due_refreshes(now_ns);
  if (now_ns - last_tx_ns_ >= ms_to_ns(heartbeat_ms_) && out_.empty()) {
    queue_frame(wire::kHeaderSize, [](std::span<uint8_t> out) { return wire::encode_heartbeat(out); });
    last_tx_ns_ = now_ns;
  }
}

}  // namespace tw::broker
