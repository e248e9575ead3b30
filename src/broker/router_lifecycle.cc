// Channel lifecycle: a channel that nobody publishes, provides or subscribes
// to is freed after channel_linger_ms, with its last-value image, so one
// client that created many topics and left does not hold max_channels for
// ever (issue 18). Wildcard subscribers count: a channel a wildcard covers
// and delivers stays. Ids are not reused: a connection's channel ids stay
// valid for its life (docs/protocol.md), and a freed id costs the table one
// empty slot.
//
// Only a router that owns its channels alone frees them: the single-threaded
// broker. A gateway shares names with the directory, a mirror follows its
// gateway; neither frees (docs/configuration.md says so).
#include "broker/router.h"
#include "broker/services.h"

namespace tw::broker {

bool Router::unused(const cache::Channel& ch) const {
  const Route& r = routes_[ch.id - 1];
  if (r.publishers || r.exact_refs || !r.subscribers.empty() || !r.delayed.empty()) return false;
  return !r.provider && !r.pending && r.linger_until_ns == 0;
}

void Router::consider_freeing(cache::Channel& ch) {
  if (upstream_ || directory_ || !unused(ch)) return;
  Route& r = route(ch);
  r.free_at_ns = clock_() + limits_.channel_linger_ms * 1'000'000ull;
  unused_.insert(ch.id);
}

void Router::free_unused(uint64_t now) {
  std::vector<cache::ChannelId> due;
  for (auto it = unused_.begin(); it != unused_.end();) {
    Route& r = routes_[*it - 1];
    if (r.free_at_ns > now) {
      ++it;
      continue;
    }
    due.push_back(*it);
    it = unused_.erase(it);
  }
  for (cache::ChannelId id : due) {
    cache::Channel& ch = *channels_.get(id);
    if (!unused(ch)) {
      route(ch).free_at_ns = 0;  // in use again: considered anew when it is left
      continue;
    }
    if (Service* s = interactive_service(ch.topic)) s->orphans.erase(id);
    routes_[id - 1] = Route{};
    channels_.erase(id);
    ++stats_.channels_freed;
  }
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
