#include "session/delivery_policy.h"

#include <cstdio>

namespace tw::session {

namespace {
uint64_t ms_to_ns(uint64_t ms) { return ms * 1'000'000ull; }
}  // namespace

DeliveryPolicy::Verdict DeliveryPolicy::send_image(const cache::Channel& channel, uint32_t request_id) {
  queue_image(channel, request_id, true);
  return over_bound() ? slow_consumer() : Verdict::Keep;
}

DeliveryPolicy::Verdict DeliveryPolicy::send_stream_image(const cache::Channel& channel, SlowPolicy policy) {
  auto it = lag_.find(channel.id);
  const bool hold = it != lag_.end() || (policy != SlowPolicy::Disconnect && (congested_ || over_bound()));
  if (!hold) {
    queue_image(channel, 0, true);
    return after_queued(policy);
  }
  // Drop as well as conflate: a stream cannot start without its image, so
  // the image waits for room and is then the channel's current one.
  if (it == lag_.end()) return start_lag(channel.id, Lag{true, true, 0}), Verdict::Keep;
  it->second = Lag{true, true, 0};
  return Verdict::Keep;
}

DeliveryPolicy::Verdict DeliveryPolicy::send_delivery(const broker::Delivery& delivery) {
  if (delivery.conflate_ms != 0) {
    hold_for_interval(delivery);
    return Verdict::Keep;
  }
  Verdict verdict = Verdict::Keep;
  if (!conflated_.empty() && release_interval_hold(delivery, verdict)) return verdict;
  if ((congested_ || !lag_.empty()) && hold_back(delivery.channel, delivery.policy)) return Verdict::Keep;
  output_.queue_ref(delivery.frames.get(*encoder_));
  return after_queued(delivery.policy);
}

void DeliveryPolicy::send_status(const cache::Channel& channel, wire::ChannelState state, wire::Code code,
                                 std::string_view text, bool introduce) {
  output_.queue(encoder_->status_max(channel, text, introduce), [&](std::span<uint8_t> out) {
    return encoder_->encode_status(out, channel, state, code, text, introduce);
  });
}

DeliveryPolicy::Verdict DeliveryPolicy::after_queued(SlowPolicy policy) {
  if (!over_bound()) return Verdict::Keep;
  if (policy == SlowPolicy::Disconnect) return slow_consumer();
  congested_ = true;  // this message is queued; the next ones are held back
  return Verdict::Keep;
}

bool DeliveryPolicy::hold_back(const cache::Channel& channel, SlowPolicy policy) {
  auto it = lag_.find(channel.id);
  if (it == lag_.end()) {
    // A disconnect subscription is never held back: it gets every message or the connection ends.
    if (!congested_ || policy == SlowPolicy::Disconnect) return false;
    if (policy == SlowPolicy::Conflate) {
      start_lag(channel.id, Lag{true, false, 0});
      return true;
    }
    it = lag_.emplace(channel.id, Lag{}).first;  // one node per channel per episode, never per message
  }
  if (it->second.refresh) return true;  // the refresh image will include this message
  ++it->second.dropped;
  ++stats_.dropped_messages;
  ++env_.counters.dropped_messages;
  return true;
}

void DeliveryPolicy::start_lag(cache::ChannelId id, Lag lag) {
  lag_.emplace(id, lag);
  ++stats_.conflated_channels;
  ++env_.counters.conflated_channels;
}

bool DeliveryPolicy::resume() {
  const size_t low_water = env_.max_output_buffer / 2;
  if ((!congested_ && lag_.empty()) || output_.queued_bytes() > low_water) return false;
  congested_ = false;
  if (lag_.empty()) return false;
  // In lag-set order until the queue is at the bound again; the rest wait for the next drain.
  auto it = lag_.begin();
  while (it != lag_.end() && output_.queued_bytes() < env_.max_output_buffer) {
    const cache::Channel* channel = env_.router.channel(it->first);
    // A channel the connection no longer receives (unsubscribed meanwhile) is forgotten.
    if (channel != nullptr && env_.router.delivers(&self_, channel->id)) {
      const Lag& lag = it->second;
      if (!lag.refresh) {
        copy_drop_notice(*channel, lag.dropped);
      } else if (channel->has_data()) {
        copy_image(*channel, lag.introduce);
        ++stats_.refresh_images;
        ++env_.counters.refresh_images;
      }
    }
    it = lag_.erase(it);
  }
  return true;
}

void DeliveryPolicy::queue_image(const cache::Channel& channel, uint32_t request_id, bool introduce) {
  // Images are not the hot path: each subscriber gets its own copy, which
  // keeps the introduction and the image adjacent in its queue.
  output_.queue(encoder_->image_max(channel, introduce), [&](std::span<uint8_t> out) {
    return encoder_->encode_image(out, channel, request_id, introduce);
  });
}

void DeliveryPolicy::copy_image(const cache::Channel& channel, bool introduce) {
  output_.copy(encoder_->image_max(channel, introduce), [&](std::span<uint8_t> out) {
    return encoder_->encode_image(out, channel, 0, introduce);
  });
}

void DeliveryPolicy::copy_drop_notice(const cache::Channel& channel, uint64_t dropped) {
  char buf[48];
  int len = std::snprintf(buf, sizeof buf, "%llu messages dropped", static_cast<unsigned long long>(dropped));
  const std::string_view text(buf, static_cast<size_t>(len));
  output_.copy(encoder_->status_max(channel, text, false), [&](std::span<uint8_t> out) {
    return encoder_->encode_status(out, channel, wire::ChannelState::Ok, wire::Code::MessagesDropped, text, false);
  });
  ++stats_.drop_notices;
  ++env_.counters.drop_notices;
}

size_t DeliveryPolicy::conflation_pending() const {
  size_t n = 0;
  for (const auto& [id, c] : conflated_) n += c.due_ns != 0;
  return n;
}

void DeliveryPolicy::hold_for_interval(const broker::Delivery& delivery) {
  const cache::ChannelId id = delivery.channel.id;
  auto lag = lag_.find(id);
  if (lag != lag_.end() && lag->second.refresh) return;  // the congestion refresh will carry it
  Conflated& held = conflated_[id];
  held.policy = delivery.policy;
  if (held.due_ns == 0) held.due_ns = env_.clock.now_ns() + ms_to_ns(delivery.conflate_ms);
}

bool DeliveryPolicy::release_interval_hold(const broker::Delivery& delivery, Verdict& verdict) {
  auto it = conflated_.find(delivery.channel.id);
  if (it == conflated_.end()) return false;
  const bool held = it->second.due_ns != 0;
  conflated_.erase(it);  // the channel is real time now
  if (!held) return false;
  // The cache already applied this message: the refresh includes it, in order.
  verdict = send_interval_refresh(delivery.channel.id, delivery.policy);
  return true;
}

DeliveryPolicy::Verdict DeliveryPolicy::send_due_refreshes(uint64_t now_ns) {
  for (auto it = conflated_.begin(); it != conflated_.end();) {
    Conflated& c = it->second;
    if (c.due_ns != 0 && now_ns >= c.due_ns) {
      c.due_ns = 0;
      if (send_interval_refresh(it->first, c.policy) == Verdict::SlowConsumer) return Verdict::SlowConsumer;
    }
    // Idle nodes of channels no longer conflated for this connection are forgotten.
    if (c.due_ns == 0 && env_.router.conflate_ms_of(&self_, it->first) == 0) {
      it = conflated_.erase(it);
    } else {
      ++it;
    }
  }
  return Verdict::Keep;
}

DeliveryPolicy::Verdict DeliveryPolicy::send_interval_refresh(cache::ChannelId id, SlowPolicy policy) {
  const cache::Channel* channel = env_.router.channel(id);
  if (channel == nullptr || !channel->has_data() || !env_.router.delivers(&self_, id)) return Verdict::Keep;
  auto lag = lag_.find(id);
  if (lag != lag_.end()) {
    lag->second.refresh = true;  // already held back: its resume sends the current image
    return Verdict::Keep;
  }
  if (policy != SlowPolicy::Disconnect && (congested_ || over_bound())) {
    start_lag(id, Lag{true, false, 0});
    return Verdict::Keep;
  }
  copy_image(*channel, false);
  ++conflation_refreshes_;
  ++env_.counters.conflation_refreshes;
  return after_queued(policy);
}

}  // namespace tw::session
