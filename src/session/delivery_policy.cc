#include "session/delivery_policy.h"

#include <cstdio>

namespace tw::session {

OwnCopies& OwnCopies::none() {
  static OwnCopies shared;
  return shared;
}

namespace {
uint64_t ms_to_ns(uint64_t ms) { return ms * 1'000'000ull; }
}  // namespace

DeliveryPolicy::Verdict DeliveryPolicy::send_image(const cache::Channel& channel, uint32_t request_id) {
  queue_image(channel, request_id, true);
  return over_bound() ? slow_consumer() : Verdict::Keep;
}

DeliveryPolicy::Verdict DeliveryPolicy::send_stream_image(const cache::Channel& channel, SlowPolicy policy,
                                                          Copy copy) {
  auto it = lag_.find(channel.id);
  const bool hold = it != lag_.end() || (policy != SlowPolicy::Disconnect && (congested_ || over_bound()));
  if (!hold) {
    if (waits_for_window(copy)) return hold_for_window(channel.id, policy, true);
    if (copy.own) {
      copies_->send_copy_image(channel, copy);
    } else {
      queue_image(channel, 0, true);
    }
    return after_queued(policy);
  }
  // Drop as well as conflate: a stream cannot start without its image, so
  // the image waits for room and is then the channel's current one.
  if (it == lag_.end()) return start_lag(channel.id, Lag{true, true, 0}), Verdict::Keep;
  it->second = Lag{true, true, 0};
  return Verdict::Keep;
}

DeliveryPolicy::Verdict DeliveryPolicy::send_delivery(const broker::Delivery& delivery, Copy copy) {
  if (delivery.conflate_ms != 0) {
    hold_for_interval(delivery);
    return Verdict::Keep;
  }
  Verdict verdict = Verdict::Keep;
  if (!conflated_.empty() && release_interval_hold(delivery, verdict)) return verdict;
  if ((congested_ || !lag_.empty()) && hold_back(delivery.channel, delivery.policy)) return Verdict::Keep;
  if (!copy.own) {
    output_.queue_ref(delivery.frames.get(*encoder_));
  } else if (waits_for_window(copy)) {
    return hold_for_window(delivery.channel.id, delivery.policy, false);
  } else {
    copies_->send_copy(delivery.channel, delivery.frames.get(*encoder_), copy);
  }
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
  Lag* lag = it != lag_.end() ? &it->second : nullptr;
  if (lag == nullptr) {
    // A disconnect subscription is never held back: it gets every message or the connection ends.
    if (!congested_ || policy == SlowPolicy::Disconnect) return false;
    if (policy == SlowPolicy::Conflate) {
      start_lag(channel.id, Lag{true, false, 0});
      return true;
    }
    lag = &add_lag(channel.id, Lag{});  // one node per channel per episode, never per message
  }
  if (lag->refresh) return true;  // the refresh image will include this message
  ++lag->dropped;
  ++stats_.dropped_messages;
  ++env_.counters.dropped_messages;
  return true;
}

void DeliveryPolicy::start_lag(cache::ChannelId id, Lag lag) {
  add_lag(id, lag);
  ++stats_.conflated_channels;
  ++env_.counters.conflated_channels;
}

DeliveryPolicy::Lag& DeliveryPolicy::add_lag(cache::ChannelId id, Lag lag) {
  auto [it, added] = lag_.emplace(id, lag);
  if (added) lag_order_.push_back(id);  // one place in the order per lagging channel
  return it->second;
}

DeliveryPolicy::Verdict DeliveryPolicy::hold_for_window(cache::ChannelId id, SlowPolicy policy, bool introduce) {
  if (policy == SlowPolicy::Disconnect) return slow_consumer();
  if (policy == SlowPolicy::Conflate || introduce) {
    start_lag(id, Lag{true, introduce, 0});
  } else {
    add_lag(id, Lag{false, false, 1});
    ++stats_.dropped_messages;
    ++env_.counters.dropped_messages;
  }
  return Verdict::Keep;
}

bool DeliveryPolicy::resume() {
  const size_t low_water = env_.max_output_buffer / 2;
  if ((!congested_ && lag_.empty()) || output_.queued_bytes() > low_water) return false;
  congested_ = false;
  // In the order held until the queue is at the bound again; the rest wait for the next drain.
  bool resumed = false;
  while (!lag_order_.empty() && output_.queued_bytes() < env_.max_output_buffer) {
    const cache::ChannelId id = lag_order_.front();
    const auto entry = lag_.find(id);
    const Lag lag = entry->second;
    const cache::Channel* channel = env_.router.channel(id);
    // A channel the connection no longer receives (unsubscribed meanwhile) is forgotten.
    if (channel != nullptr && env_.router.delivers(&self_, id)) {
      if (!lag.refresh) {
        copy_drop_notice(*channel, lag.dropped);
      } else if (channel->has_data()) {
        if (!refresh(*channel, lag.introduce)) break;  // waits for an acknowledgement
        ++stats_.refresh_images;
        ++env_.counters.refresh_images;
      }
    }
    lag_.erase(entry);
    lag_order_.pop_front();
    resumed = true;
  }
  return resumed;
}

bool DeliveryPolicy::refresh(const cache::Channel& channel, bool introduce) {
  const Copy copy = copies_->copy_of(channel);
  if (waits_for_window(copy)) return false;
  if (copy.own) {
    copies_->send_copy_image(channel, copy);
  } else {
    copy_image(channel, introduce);
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
  const size_t max_size = encoder_->status_max(channel, text, false);
  if (max_size == 0) return;  // a protocol without channel status (MQTT): the gap goes unannounced
  output_.copy(max_size, [&](std::span<uint8_t> out) {
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
  if (!refresh(*channel, false)) {  // through a full window: it waits for a slot
    if (policy == SlowPolicy::Disconnect) return slow_consumer();
    start_lag(id, Lag{true, false, 0});
    return Verdict::Keep;
  }
  ++conflation_refreshes_;
  ++env_.counters.conflation_refreshes;
  return after_queued(policy);
}

}  // namespace tw::session
