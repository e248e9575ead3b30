// Channel lifecycle. A channel that nobody publishes, provides or subscribes
// to (unused) is, channel_linger_ms after it became so:
//   - kept with its last value when it has one, is not an interactive
//     service's and did not come from an MQTT PUBLISH with RETAIN 0 (MQTT
//     keeps only retained messages): a last-value cache answers a snapshot or a new subscriber
//     long after the publisher left, as an MQTT retained message stays until
//     cleared. Kept channels are freed only under pressure, oldest first:
//     when the broker's channels come within a headroom of max_channels
//     (max_channels / 64, at least one) the owning routers evict on their
//     tick, and a single-threaded broker whose table is full evicts one at
//     once for a new channel (counter channels_evicted);
//   - freed otherwise (no value: a subscription's placeholder, a REGISTER
//     that never published, an interactive channel after its release), so a
//     client that created many topics and left does not hold max_channels
//     for ever (counter channels_freed).
// Wildcard subscribers count: a channel a wildcard covers and delivers is in
// use. Ids are not reused: a connection's channel ids stay valid for its
// life (docs/protocol.md), and a freed id costs the table one empty slot.
//
// The owner of a channel frees it: the single-threaded broker's loop, or the
// gateway in a tiered broker, whose naming (the shared directory) says whether
// a publisher on an access point holds the name, and which tells the access
// points (on_channel_freed) so that their mirrors drop their copies.
#include <algorithm>

#include "broker/owned_channels.h"
#include "broker/subscribers.h"

namespace tw::broker {

bool OwnedChannels::unused(const cache::Channel& ch) const {
  if (route(ch).publishers || subscribers_->exact_refs(ch) || subscribers_->watched(ch)) return false;
  return !services_.busy(ch);
}

void OwnedChannels::consider_freeing(cache::Channel& ch) {
  if (!unused(ch)) return;
  Route& r = route(ch);
  const bool queued = r.free_at_ns != 0;
  r.free_at_ns = clock_() + limits_.channel_linger_ms * 1'000'000ull;
  if (!queued) unused_.emplace_back(r.free_at_ns, ch.id);
}

void OwnedChannels::free_unused(uint64_t now) {
  while (!unused_.empty() && unused_.front().first <= now) {
    const cache::ChannelId id = unused_.front().second;
    unused_.pop_front();
    cache::Channel* ch = channels_.get(id);
    if (!ch) continue;
    Route& r = route(*ch);
    if (!unused(*ch)) {
      r.free_at_ns = 0;  // in use again: considered anew when it is left
    } else if (r.free_at_ns > now) {
      unused_.emplace_back(r.free_at_ns, id);  // left again later: its linger restarted
    } else if (keeps_last_value(*ch)) {
      r.free_at_ns = 0;
      keep(*ch, now);
    } else if (!naming_->forget_if_unheld(ch->topic, id)) {
      r.free_at_ns = 0;  // a publisher holds it on an access point: Op::Unheld brings it back here
    } else {
      free_channel(*ch);
      ++stats_.channels_freed;
    }
  }
}

void OwnedChannels::free_channel(cache::Channel& ch) {
  const cache::ChannelId id = ch.id;
  services_.freed(ch);
  if (routes_[id - 1].kept_since_ns != 0) --kept_count_;
  routes_[id - 1] = Route{};
  subscribers_->freed(id);
  channels_.erase(id);
  freed_listener_(id);
}

bool OwnedChannels::keeps_last_value(cache::Channel& ch) {
  const Route& r = route(ch);
  // A transient last value is not kept, unless a retained message is set
  // aside behind it (cache::Channel::retained): that one outlives its publisher.
  return ch.has_data() && !services_.interactive(ch) && (!r.transient || !ch.retained_opaque().empty());
}

// A channel kept again (used, then left again) gets a new place at the back;
// its older entry in kept_ is stale from now on.
void OwnedChannels::keep(cache::Channel& ch, uint64_t now) {
  Route& r = route(ch);
  if (r.kept_since_ns != 0) --kept_count_;
  r.kept_since_ns = now == 0 ? 1 : now;
  kept_.emplace_back(r.kept_since_ns, ch.id);
  ++kept_count_;
  if (kept_.size() > 2 * kept_count_ + 64) {  // mostly stale: compact
    std::erase_if(kept_, [&](const auto& entry) {
      const cache::Channel* c = channels_.get(entry.second);
      return !c || route(*c).kept_since_ns != entry.first;
    });
  }
}

// Frees up to `count` of the oldest kept channels that are still unused;
// the number freed. A kept channel found in use again is simply not kept any more.
size_t OwnedChannels::evict_kept(size_t count) {
  size_t evicted = 0;
  while (evicted < count && !kept_.empty()) {
    const auto [since, id] = kept_.front();
    kept_.pop_front();
    cache::Channel* ch = channels_.get(id);
    if (!ch || route(*ch).kept_since_ns != since) continue;  // stale
    if (!unused(*ch) || !naming_->forget_if_unheld(ch->topic, id)) {
      route(*ch).kept_since_ns = 0;
      --kept_count_;
      continue;
    }
    free_channel(*ch);
    ++stats_.channels_evicted;
    ++evicted;
  }
  return evicted;
}

// Keeps max_channels / 64 (at least one) free for new channels while kept
// ones could make room: in a tiered broker each gateway evicts its share of
// what is over, from its own kept channels.
void OwnedChannels::relieve_pressure() {
  if (kept_count_ == 0) return;
  const size_t limit = limits_.max_channels;
  const size_t headroom = std::max<size_t>(1, limit / 64);
  const size_t named = naming_->named(channels_);
  if (named + headroom <= limit) return;
  const size_t owners = naming_->owners();
  evict_kept((named + headroom - limit + owners - 1) / owners);
}

void OwnedChannels::channel_unheld(cache::ChannelId id) {
  if (cache::Channel* ch = channels_.get(id)) consider_freeing(*ch);
}

void OwnedChannels::hold_publisher(Outlet* outlet, cache::Channel& ch) {
  if (published_by_[outlet].insert(ch.id).second) ++route(ch).publishers;
}

void OwnedChannels::release_publisher(Outlet* outlet) {
  auto it = published_by_.find(outlet);
  if (it == published_by_.end()) return;
  const std::unordered_set<cache::ChannelId> held = std::move(it->second);
  published_by_.erase(it);
  for (cache::ChannelId id : held) {
    cache::Channel* ch = channels_.get(id);
    if (!ch) continue;
    --route(*ch).publishers;
    consider_freeing(*ch);
  }
}

}  // namespace tw::broker
