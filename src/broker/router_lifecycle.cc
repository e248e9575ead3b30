// Channel lifecycle: a channel that nobody publishes, provides or subscribes
// to is freed after channel_linger_ms, with its last-value image, so one
// client that created many topics and left does not hold max_channels for
// ever (issue 18). Wildcard subscribers count: a channel a wildcard covers
// and delivers stays. Ids are not reused: a connection's channel ids stay
// valid for its life (docs/protocol.md), and a freed id costs the table one
// empty slot.
//
// The router that owns a channel frees it: the single-threaded broker's, or
// the gateway's in a tiered broker, which also asks the shared directory
// whether a publisher on an access point holds the name, and tells the access
// points (on_channel_freed) so that their mirrors drop their copies.
#include "broker/router.h"
#include "broker/services.h"

namespace tw::broker {

bool Router::unused(const cache::Channel& ch) const {
  const Route& r = routes_[ch.id - 1];
  if (r.publishers || r.exact_refs || !r.subscribers.empty() || !r.delayed.empty()) return false;
  return !r.provider && !r.pending && r.linger_until_ns == 0;
}

void Router::consider_freeing(cache::Channel& ch) {
  if (upstream_ || !unused(ch)) return;
  Route& r = route(ch);
  const bool queued = r.free_at_ns != 0;
  r.free_at_ns = clock_() + limits_.channel_linger_ms * 1'000'000ull;
  if (!queued) unused_.emplace_back(r.free_at_ns, ch.id);
}

void Router::free_unused(uint64_t now) {
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
    } else if (directory_ && !directory_->forget_if_unheld(ch->topic, id)) {
      r.free_at_ns = 0;  // a publisher holds it on an access point: Op::Unheld brings it back here
    } else {
      free_channel(*ch);
    }
  }
}

void Router::free_channel(cache::Channel& ch) {
  const cache::ChannelId id = ch.id;
  if (Service* s = interactive_service(ch.topic)) s->orphans.erase(id);
  routes_[id - 1] = Route{};
  channels_.erase(id);
  ++stats_.channels_freed;
  if (on_freed_) on_freed_(id);
}

void Router::channel_unheld(cache::ChannelId id) {
  owner_.check("Router");
  if (cache::Channel* ch = channels_.get(id)) consider_freeing(*ch);
}

// Normally nobody here receives it any more (the gateway freed it because no
// access point subscribed). A subscription that raced the free keeps its
// entries: the copy stays, inert, and the topic's next channel comes under a new id.
void Router::mirror_forget(cache::ChannelId id) {
  owner_.check("Router");
  cache::Channel* ch = channels_.get(id);
  if (!ch || !route(*ch).subscribers.empty() || !route(*ch).delayed.empty()) return;
  routes_[id - 1] = Route{};
  channels_.erase(id);
}

void Router::hold_publisher(Outlet* outlet, cache::Channel& ch) {
  if (published_by_[outlet].insert(ch.id).second) ++route(ch).publishers;
}

void Router::release_publisher(Outlet* outlet) {
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
