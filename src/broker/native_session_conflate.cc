// NativeSession: conflated subscriptions (docs/ARCHITECTURE.md, "Conflation").
// A delivery whose subscription asked for conflate_ms > 0 is not queued: its
// channel is marked with a due time (first held message + interval), and on
// the first broker tick at or after it the channel's current IMAGE goes out
// as a refresh (request_id 0): every field's latest value, i.e. all held
// updates merged; its seq says how far it reaches. The cache already holds
// the merged state, so the session keeps one small node per channel and
// nothing per message. A due refresh on a congested connection waits in the
// lag set like a slow consumer's (one pending refresh per channel at most).
#include "base/clock.h"
#include "broker/native_session.h"

namespace tw::broker {

namespace {
uint64_t ms_to_ns(uint64_t ms) { return ms * 1'000'000ull; }
}  // namespace

size_t NativeSession::conflation_pending() const {
  size_t n = 0;
  for (const auto& [id, c] : conflated_) n += c.due_ns != 0;
  return n;
}

void NativeSession::hold_for_interval(const Delivery& delivery) {
  const cache::ChannelId id = delivery.channel.id;
  auto lag = lag_.find(id);
  if (lag != lag_.end() && lag->second.refresh) return;  // the congestion refresh will carry it
  Conflated& held = conflated_[id];
  held.policy = delivery.policy;
  if (held.due_ns == 0) held.due_ns = env_.reactor.now_ns() + ms_to_ns(delivery.conflate_ms);
}

bool NativeSession::release_interval_hold(const Delivery& delivery) {
  auto it = conflated_.find(delivery.channel.id);
  if (it == conflated_.end()) return false;
  const bool held = it->second.due_ns != 0;
  conflated_.erase(it);  // the channel is real time now
  if (!held) return false;
  // The cache already applied this message: the refresh includes it, in order.
  send_interval_refresh(delivery.channel.id, delivery.policy);
  return true;
}

void NativeSession::send_due_refreshes(uint64_t now_ns) {
  for (auto it = conflated_.begin(); it != conflated_.end() && !closing();) {
    Conflated& c = it->second;
    if (c.due_ns != 0 && now_ns >= c.due_ns) {
      c.due_ns = 0;
      send_interval_refresh(it->first, c.policy);
    }
    // Idle nodes of channels no longer conflated for this connection are forgotten.
    if (c.due_ns == 0 && env_.router.conflate_ms_of(this, it->first) == 0) {
      it = conflated_.erase(it);
    } else {
      ++it;
    }
  }
}

void NativeSession::send_interval_refresh(cache::ChannelId id, SlowPolicy policy) {
  cache::Channel* channel = env_.router.channel(id);
  if (channel == nullptr || !channel->has_data() || !env_.router.delivers(this, id)) return;
  auto lag = lag_.find(id);
  if (lag != lag_.end()) {
    lag->second.refresh = true;  // already held back: its resume sends the current image
    return;
  }
  if (policy != SlowPolicy::Disconnect && (congested_ || over_output_limit())) {
    lag_.emplace(id, Lag{true, false, 0});
    ++slow_.conflated_channels;
    ++env_.counters.conflated_channels;
    return;
  }
  append_image_copy(*channel, false);
  ++conflation_refreshes_;
  ++env_.counters.conflation_refreshes;
  env_.fanout.mark_dirty(this);
  if (!over_output_limit()) return;
  if (policy == SlowPolicy::Disconnect) return fail_slow_consumer();
  congested_ = true;
}

}  // namespace tw::broker
