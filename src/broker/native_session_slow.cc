// NativeSession: the output side of slow consumers (docs/ARCHITECTURE.md,
// "Slow consumers"). A connection whose queue is over max_output_buffer is
// "congested": deliveries under the conflate policy only record their channel
// in the lag set, deliveries under the drop policy are counted per channel,
// and a delivery under the disconnect policy that would still be queued
// closes the connection. When the queue drains to half the bound,
// flush_output() resumes: each conflated channel gets its current IMAGE (a
// refresh), each dropping channel a STATUS MESSAGES_DROPPED, and normal
// delivery continues. Memory is bounded by the queue bound plus one entry per
// channel, whatever the publish rate.
#include <cstdio>

#include "base/log.h"
#include "broker/native_session.h"

namespace tw::broker {

namespace {
constexpr size_t kIntroFrameMax = wire::kHeaderSize + 4 + 1 + 2 + 0xFFFF;  // CHANNEL with the longest topic
constexpr size_t kStatusFrameMax = 128;                                    // STATUS "N messages dropped"
}  // namespace

// Snapshot replies (and stream images of outlets used without a policy):
// a reply that leaves the queue over the bound closes the connection.
void NativeSession::send_image(const cache::Channel& channel, uint32_t request_id) {
  if (closing()) return;
  queue_image(channel, request_id);
  if (over_output_limit()) fail_slow_consumer();
}

void NativeSession::send_stream_image(const cache::Channel& channel, SlowPolicy policy) {
  if (closing()) return;
  auto it = lag_.find(channel.id);
  const bool hold = it != lag_.end() || (policy != SlowPolicy::Disconnect && (congested_ || over_output_limit()));
  if (!hold) {
    queue_image(channel, 0);
    if (!over_output_limit()) return;
    if (policy == SlowPolicy::Disconnect) return fail_slow_consumer();
    congested_ = true;
    return;
  }
  // Drop as well as conflate: a stream cannot start without its image, so
  // the image waits for room and is then the channel's current one.
  if (it == lag_.end()) {
    it = lag_.emplace(channel.id, Lag{}).first;
    ++slow_.conflated_channels;
    ++env_.counters.conflated_channels;
  }
  it->second = Lag{true, true, 0};
}

void NativeSession::send_delivery(const Delivery& delivery) {
  if (closing()) return;
  if (delivery.conflate_ms != 0) return hold_for_interval(delivery);
  if (!conflated_.empty() && release_interval_hold(delivery)) return;
  if ((congested_ || !lag_.empty()) && hold_back(delivery.channel, delivery.policy)) return;
  out_.append_ref(delivery.native_frame);
  env_.fanout.mark_dirty(this);
  if (!over_output_limit()) return;
  if (delivery.policy == SlowPolicy::Disconnect) return fail_slow_consumer();
  congested_ = true;  // this message is queued; the next ones are held back
}

bool NativeSession::hold_back(const cache::Channel& channel, SlowPolicy policy) {
  auto it = lag_.find(channel.id);
  if (it == lag_.end()) {
    // A disconnect subscription is never held back: it gets every message or the connection ends.
    if (!congested_ || policy == SlowPolicy::Disconnect) return false;
    it = lag_.emplace(channel.id, Lag{}).first;  // one node per channel per episode, never per message
    if (policy == SlowPolicy::Conflate) {
      it->second.refresh = true;
      ++slow_.conflated_channels;
      ++env_.counters.conflated_channels;
      return true;
    }
  }
  if (it->second.refresh) return true;  // the refresh image will include this message
  ++it->second.dropped;
  ++slow_.dropped_messages;
  ++env_.counters.dropped_messages;
  return true;
}

void NativeSession::fail_slow_consumer() {
  ++env_.counters.slow_consumers;
  slow_.disconnected = true;
  fail(wire::Code::SlowConsumer, "output buffer limit exceeded");
}

// Called from flush_output (inside Fanout::flush_all, so the arena must not
// be touched): frames go to the backlog as copies, in lag-set order, until
// the queue is at the bound again; the rest wait for the next drain.
void NativeSession::resume_lagging() {
  const size_t bound = env_.config.limits.max_output_buffer;
  auto it = lag_.begin();
  while (it != lag_.end() && out_.queued_bytes() < bound) {
    cache::Channel* channel = env_.router.channel(it->first);
    // A channel the connection no longer receives (unsubscribed meanwhile) is forgotten.
    if (channel != nullptr && env_.router.delivers(this, channel->id)) {
      const Lag& lag = it->second;
      if (lag.refresh) {
        if (channel->has_data()) append_refresh(*channel, lag.introduce);
      } else {
        append_drop_notice(*channel, lag.dropped);
      }
    }
    it = lag_.erase(it);
  }
}

void NativeSession::append_refresh(const cache::Channel& channel, bool introduce) {
  append_image_copy(channel, introduce);
  ++slow_.refresh_images;
  ++env_.counters.refresh_images;
}

// The channel's current image (a refresh, request_id 0) as a copy in the
// backlog: no arena, so it is safe inside a fan-out or a flush.
void NativeSession::append_image_copy(const cache::Channel& channel, bool introduce) {
  const size_t need = (introduce ? kIntroFrameMax : 0) + wire::kImageFixedSize + channel.image_size();
  if (resume_scratch_.size() < need) resume_scratch_.resize(need);
  std::span<uint8_t> out(resume_scratch_.data(), need);
  size_t n = 0;
  if (introduce) n = wire::encode(out, wire::ChannelIntro{channel.id, channel.kind, channel.topic});
  std::span<uint8_t> image = out.subspan(n);
  size_t payload = channel.encode_image(image.subspan(wire::kImageFixedSize));
  wire::encode_image_prefix(image, channel.id, channel.seq, 0, payload);
  n += wire::kImageFixedSize + payload;
  out_.append_copy({resume_scratch_.data(), n});
}

void NativeSession::append_drop_notice(const cache::Channel& channel, uint64_t dropped) {
  char text[48];
  int len = std::snprintf(text, sizeof text, "%llu messages dropped", static_cast<unsigned long long>(dropped));
  wire::StatusMsg status{channel.id, wire::ChannelState::Ok, wire::Code::MessagesDropped,
                         std::string_view(text, static_cast<size_t>(len))};
  uint8_t frame[kStatusFrameMax];
  size_t n = wire::encode({frame, sizeof frame}, status);
  out_.append_copy({frame, n});
  ++slow_.drop_notices;
  ++env_.counters.drop_notices;
}

}  // namespace tw::broker
