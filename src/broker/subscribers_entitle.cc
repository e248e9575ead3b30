// Entitlement changes of a connected outlet (an auth reload): docs/security.md, "Revocation".
#include <algorithm>

#include "broker/subscribers.h"

namespace tw::broker {

void Subscribers::reentitle(Outlet* outlet, const EntitledFn& before) {
  auto it = patterns_by_outlet_.find(outlet);
  if (it == patterns_by_outlet_.end()) return;
  std::vector<std::string> revoked_exact;
  for (const auto& entry : it->second) {
    const std::string& pattern = entry.first;
    const Held& held = entry.second;  // not a structured binding: the lambda below captures it (clang 14)
    if (!topic::is_wildcard(pattern)) {
      if (!outlet->entitled(pattern, held.delay_ms)) revoked_exact.push_back(pattern);
      continue;
    }
    const PatternRef ref = held_ref(outlet, pattern, held);
    channels_.match(pattern, [&](cache::Channel& ch) {
      const bool was = before(ch.topic, held.delay_ms), now = outlet->entitled(ch.topic, held.delay_ms);
      if (was && !now) revoke_ref(ch, ref);
      if (!was && now) add_counted_ref(ch, ref);
    });
  }
  for (const std::string& pattern : revoked_exact) {
    auto& mine = patterns_by_outlet_[outlet];
    auto pos = mine.find(pattern);
    const PatternRef ref = held_ref(outlet, pattern, pos->second);
    mine.erase(pos);
    patterns_.erase(pattern, ref);
    if (cache::Channel* ch = channels_.find(pattern)) revoke_ref(*ch, ref);
    owner_.interest(pattern, false);
  }
  if (auto mine = patterns_by_outlet_.find(outlet); mine != patterns_by_outlet_.end() && mine->second.empty()) {
    patterns_by_outlet_.erase(mine);
  }
}

void Subscribers::revoke_ref(cache::Channel& ch, const PatternRef& ref) {
  std::vector<Entry>* list = &watch(ch).subscribers;
  const cache::Channel* shown = &ch;
  if (ref.delay_ms != 0) {
    auto& delayed = watch(ch).delayed;
    auto d = std::find_if(delayed.begin(), delayed.end(), [&](const DelayedStream* s) { return s->delay_ms == ref.delay_ms; });
    if (d != delayed.end()) {
      list = &(*d)->subscribers;
      shown = &(*d)->copy;
    }
  }
  auto e = std::find_if(list->begin(), list->end(), [&](const Entry& x) { return x.outlet == ref.outlet; });
  // The stream ends for the outlet when this was the last pattern covering it: say why, first.
  if (e != list->end() && e->refs == 1) {
    ref.outlet->send_status(*shown, wire::ChannelState::Closed, wire::Code::NotAuthorized,
                            "entitlement revoked", !e->has_image());
  }
  drop_counted_ref(ch, ref);
}

}  // namespace tw::broker
