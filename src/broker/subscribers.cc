#include "broker/subscribers.h"

#include <algorithm>

namespace tw::broker {

namespace {
size_t policy_slot(SlowPolicy p) { return static_cast<size_t>(p) - 1; }  // Conflate = 0 ... Disconnect = 2

void count_interval(uint32_t& realtime_refs, uint32_t& min_ms, uint32_t conflate_ms) {
  if (conflate_ms == 0) {
    ++realtime_refs;
  } else if (min_ms == 0 || conflate_ms < min_ms) {
    min_ms = conflate_ms;
  }
}
}  // namespace

Subscribers::Subscribers(const RouterLimits& limits, output::Fanout& fanout, const Clock& clock,
                         cache::ChannelTable& channels, Interest& owner, RouterStats& stats)
    : limits_(limits),
      fanout_(fanout),
      clock_(clock),
      channels_(channels),
      owner_(owner),
      stats_(stats),
      delay_budget_{limits.delay_max_bytes} {}

Subscribers::~Subscribers() = default;

SlowPolicy Subscribers::Entry::policy() const {
  for (size_t i = policy_refs.size(); i-- > 0;) {
    if (policy_refs[i] > 0) return static_cast<SlowPolicy>(i + 1);
  }
  return SlowPolicy::Conflate;
}

Outcome Subscribers::check_subscribe(Outlet* outlet, std::string_view pattern, uint32_t delay_ms) const {
  if (auto e = topic::validate_pattern(pattern, limits_.topic); e != topic::Error::Ok) {
    return {wire::Code::InvalidTopic, topic::describe(e)};
  }
  auto it = patterns_by_outlet_.find(outlet);
  if (it == patterns_by_outlet_.end()) return check_delay(delay_ms);
  const auto& mine = it->second;
  if (mine.find(pattern) != mine.end()) return {};
  if (mine.size() >= limits_.max_subscriptions) {
    return {wire::Code::TooManySubscriptions, "subscription limit per connection reached"};
  }
  return check_delay(delay_ms);
}

Outcome Subscribers::subscribe(Outlet* outlet, std::string_view pattern, SlowPolicy policy, uint32_t conflate_ms,
                               uint32_t delay_ms) {
  if (Outcome check = check_subscribe(outlet, pattern, delay_ms); !check.ok()) return check;
  auto& mine = patterns_by_outlet_[outlet];
  if (mine.find(pattern) != mine.end()) return {};
  if (policy == SlowPolicy::Default) policy = limits_.default_policy;
  mine.emplace(std::string(pattern), Held{policy, conflate_ms, delay_ms});
  const bool exact = !topic::is_wildcard(pattern);
  const PatternRef ref{outlet, exact, policy, conflate_ms, delay_ms};
  patterns_.insert(pattern, ref);
  owner_.interest(pattern, true);
  channels_.match(pattern, [&](cache::Channel& ch) { add_ref(ch, ref); });
  if (!exact) return {};
  const Outcome opened = owner_.open(outlet, pattern);
  if (!opened.ok()) unsubscribe(outlet, pattern);
  return opened;
}

Outcome Subscribers::unsubscribe(Outlet* outlet, std::string_view pattern) {
  auto it = patterns_by_outlet_.find(outlet);
  if (it == patterns_by_outlet_.end()) return {wire::Code::NotSubscribed, "no such subscription"};
  auto& mine = it->second;
  auto pos = mine.find(pattern);
  if (pos == mine.end()) return {wire::Code::NotSubscribed, "no such subscription"};
  const std::string held_pattern = pos->first;
  const Held held = pos->second;
  // Forgotten before the refs drop, so intervals are recomputed from the patterns that remain.
  mine.erase(pos);
  if (mine.empty()) patterns_by_outlet_.erase(it);
  forget_pattern(outlet, held_pattern, held);
  return {};
}

void Subscribers::resend_images(Outlet* outlet, std::string_view pattern) {
  channels_.match(pattern, [&](cache::Channel& ch) {
    Entry* e = find_entry(watch(ch).subscribers, outlet);
    if (!e || !ch.has_data()) return;
    outlet->send_prior_image(ch, e->policy());
    e->image_seq = ch.seq;
  });
}

void Subscribers::forget_pattern(Outlet* outlet, std::string_view pattern, const Held& held) {
  const PatternRef ref = held_ref(outlet, pattern, held);
  patterns_.erase(pattern, ref);
  channels_.match(pattern, [&](cache::Channel& ch) { drop_ref(ch, ref); });
  owner_.interest(pattern, false);
}

void Subscribers::remove_outlet(Outlet* outlet) {
  auto it = patterns_by_outlet_.find(outlet);
  if (it == patterns_by_outlet_.end()) return;
  HeldPatterns held_list = std::move(it->second);
  patterns_by_outlet_.erase(it);
  for (const auto& [pattern, held] : held_list) forget_pattern(outlet, pattern, held);
}

size_t Subscribers::subscription_count(Outlet* outlet) const {
  auto it = patterns_by_outlet_.find(outlet);
  return it == patterns_by_outlet_.end() ? 0 : it->second.size();
}

std::vector<HeldSubscription> Subscribers::subscriptions_of(const Outlet* outlet) const {
  std::vector<HeldSubscription> out;
  auto it = patterns_by_outlet_.find(const_cast<Outlet*>(outlet));
  if (it == patterns_by_outlet_.end()) return out;
  for (const auto& [pattern, held] : it->second) out.push_back({pattern, held.policy, held.conflate_ms, held.delay_ms});
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.pattern < b.pattern; });
  return out;
}

const Subscribers::Entry* Subscribers::entry_of(const Outlet* outlet, cache::ChannelId id) const {
  if (is_delayed_id(id)) return delayed_entry(outlet, id);
  if (id == 0 || id > watches_.size()) return nullptr;
  return find_entry(watches_[id - 1].subscribers, outlet);
}

SlowPolicy Subscribers::policy_of(const Outlet* outlet, cache::ChannelId id) const {
  const Entry* e = entry_of(outlet, id);
  return e ? e->policy() : SlowPolicy::Default;
}

uint32_t Subscribers::conflate_ms_of(const Outlet* outlet, cache::ChannelId id) const {
  const Entry* e = entry_of(outlet, id);
  return e ? e->conflate_ms() : 0;
}

void Subscribers::set_weight(const Outlet* outlet, cache::ChannelId id, uint32_t count) {
  if (!channels_.get(id)) return;
  if (Entry* e = find_entry(watches_[id - 1].subscribers, outlet)) e->weight = count;
}

cache::Channel* Subscribers::channel(cache::ChannelId id) {
  return is_delayed_id(id) ? delayed_channel(id) : channels_.get(id);
}

void Subscribers::for_each_exact_under(std::string_view service,
                                       const std::function<void(std::string_view, Outlet*)>& fn) const {
  patterns_.for_each_exact_under(service, [&](std::string_view topic, const PatternRef& ref) { fn(topic, ref.outlet); });
}

uint32_t Subscribers::min_conflate_ms(const Outlet* outlet, std::string_view topic, uint32_t delay_ms) const {
  auto it = patterns_by_outlet_.find(const_cast<Outlet*>(outlet));
  if (it == patterns_by_outlet_.end()) return 0;
  uint32_t best = 0;
  for (const auto& [pattern, h] : it->second) {
    if (h.delay_ms != delay_ms || h.conflate_ms == 0 || (best != 0 && h.conflate_ms >= best)) continue;
    if (topic::matches(pattern, topic)) best = h.conflate_ms;
  }
  return best;
}

void Subscribers::add_ref(cache::Channel& ch, const PatternRef& ref) {
  if (ref.exact || ref.outlet->entitled(ch.topic, ref.delay_ms)) add_counted_ref(ch, ref);
}

void Subscribers::drop_ref(cache::Channel& ch, const PatternRef& ref) {
  if (ref.exact || ref.outlet->entitled(ch.topic, ref.delay_ms)) drop_counted_ref(ch, ref);
}

void Subscribers::add_counted_ref(cache::Channel& ch, const PatternRef& ref) {
  Watch& w = watch(ch);
  if (ref.exact) ++w.exact_refs;
  // A delayed subscription is never in the real-time path.
  const bool added = ref.delay_ms != 0 ? add_delayed_ref(ch, ref) : attach(w.subscribers, ch, ref);
  owner_.attached(ch, ref.exact, added);
}

bool Subscribers::watched(const cache::Channel& ch) const {
  const Watch& w = watch(ch);
  return !w.subscribers.empty() || !w.delayed.empty();
}

uint32_t Subscribers::subscriber_count(const cache::Channel& ch) const {
  const Watch& w = watch(ch);
  uint32_t count = 0;
  for (const Entry& e : w.subscribers) count += e.weight;
  for (const DelayedStream* d : w.delayed) {
    count += d->history;
    for (const Entry& e : d->subscribers) count += e.weight;
  }
  return count;
}

bool Subscribers::attach(std::vector<Entry>& list, const cache::Channel& shown, const PatternRef& ref) {
  auto count = [&](Entry& e) {
    ++e.policy_refs[policy_slot(ref.policy)];
    count_interval(e.realtime_refs, e.min_conflate_ms, ref.conflate_ms);
  };
  for (Entry& e : list) {
    if (e.outlet != ref.outlet) continue;
    ++e.refs;
    e.exact += ref.exact;
    count(e);
    return false;
  }
  list.push_back({ref.outlet, 1, ref.exact ? 1u : 0u, 0});
  Entry& added = list.back();
  count(added);
  if (shown.has_data()) {
    ref.outlet->send_stream_image(shown, ref.policy);
    added.image_seq = shown.seq;
  }
  // A new subscriber of a STALE channel learns it at once (after the image, if any).
  if (shown.state != wire::ChannelState::Ok) {
    ref.outlet->send_status(shown, shown.state, wire::Code::ProviderLost, "channel is stale", !shown.has_data());
  }
  return true;
}

void Subscribers::drop_counted_ref(cache::Channel& ch, const PatternRef& ref) {
  Outlet* outlet = ref.outlet;
  Watch& w = watch(ch);
  auto& list = ref.delay_ms != 0 ? delayed_subscribers(ch, ref.delay_ms) : w.subscribers;
  for (size_t i = 0; i < list.size(); ++i) {
    Entry& e = list[i];
    if (e.outlet != outlet) continue;
    e.exact -= ref.exact;
    --e.policy_refs[policy_slot(ref.policy)];
    if (ref.conflate_ms == 0) {
      --e.realtime_refs;
    } else if (ref.conflate_ms == e.min_conflate_ms) {
      // Not per message: only when a pattern goes; the dropped pattern is already forgotten.
      e.min_conflate_ms = min_conflate_ms(outlet, ch.topic, ref.delay_ms);
    }
    if (--e.refs == 0) {
      list[i] = list.back();
      list.pop_back();
    }
    break;
  }
  if (ref.delay_ms != 0) drop_delayed_if_unwatched(ch, ref.delay_ms);
  if (ref.exact) --w.exact_refs;
  owner_.detached(ch, ref.exact);
}

void Subscribers::created(cache::Channel& ch) {
  if (watches_.size() < ch.id) watches_.resize(channels_.id_limit() - 1);
  record_history(ch);
  patterns_.match(ch.topic, [&](const PatternRef& ref) { add_ref(ch, ref); });
}

void Subscribers::freed(cache::ChannelId id) {
  // A delay history's recordings hold no subscriber: they go with the channel.
  for (DelayedStream* d : watches_[id - 1].delayed) {
    delay_budget_.used -= d->copy_bytes;
    delayed_.erase(d->copy.id);
  }
  watches_[id - 1] = Watch{};
}

void Subscribers::fan_out(cache::Channel& ch, std::span<const uint8_t> payload, bool image,
                          const MessageOrigin& origin) {
  output::StreamFrames frames(fanout_, ch, payload, image);
  fan_out(ch, frames, payload, image, origin);
}

void Subscribers::fan_out(cache::Channel& ch, output::StreamFrames& frames, std::span<const uint8_t> payload, bool image,
                          const MessageOrigin& origin) {
  Watch& w = watch(ch);
  if (!w.delayed.empty()) record_delayed(ch, payload, image);
  if (w.subscribers.empty()) return;
  origin_ = origin;
  // Subscribers that have no image yet get one (it already holds this message).
  send_pending_images(ch, false);
  deliver(w.subscribers, ch, frames, payload, image);
  origin_ = {};
}

void Subscribers::relay(cache::Channel& ch, std::span<const uint8_t> payload, std::span<const uint8_t> frame,
                        bool image, bool prior, const MessageOrigin& origin) {
  output::StreamFrames frames(fanout_, ch, payload, image);
  if (prior) {
    // Local subscribers waiting for it get it as state older than their
    // subscription. Its frame's request_id marks it for the link only, so
    // it is never sent on by reference.
    send_pending_images(ch, true);
  } else {
    frames.pin(output::StreamEncoder::kNativeSlot, frame);
  }
  fan_out(ch, frames, payload, image, origin);
}

void Subscribers::deliver(std::vector<Entry>& list, const cache::Channel& ch, output::StreamFrames& frames,
                          std::span<const uint8_t> payload, bool image) {
  Delivery delivery{ch, image, payload, frames};
  for (Entry& e : list) {
    if (e.image_seq == ch.seq) continue;
    delivery.policy = e.policy();
    delivery.conflate_ms = e.conflate_ms();
    e.outlet->send_delivery(delivery);
    ++stats_.deliveries;
  }
}

void Subscribers::send_pending_images(cache::Channel& ch, bool prior) {
  for (Entry& e : watch(ch).subscribers) {
    if (e.has_image()) continue;
    if (prior) {
      e.outlet->send_prior_image(ch, e.policy());
    } else {
      e.outlet->send_stream_image(ch, e.policy());
    }
    e.image_seq = ch.seq;
  }
}

void Subscribers::status(cache::Channel& ch, wire::ChannelState state, wire::Code code, std::string_view text) {
  ch.state = state;
  for (Entry& e : watch(ch).subscribers) e.outlet->send_status(ch, state, code, text, !e.has_image());
  if (!watch(ch).delayed.empty()) delayed_status(ch, state, code, text);
}

void Subscribers::end_streams(cache::Channel& ch, wire::Code code, std::string_view text) {
  status(ch, wire::ChannelState::Closed, code, text);
  std::vector<Outlet*> ended;
  for (const Entry& e : watch(ch).subscribers) {
    if (e.exact > 0) ended.push_back(e.outlet);
  }
  add_delayed_exact(ch, ended);
  const std::string topic = ch.topic;  // unsubscribe may not keep a view into the channel stable
  for (Outlet* outlet : ended) unsubscribe(outlet, topic);
  forget_images(ch);  // a reopened channel starts with an image
  ch.clear_image();
  ch.state = wire::ChannelState::Ok;
  reset_delayed(ch);
}

void Subscribers::forget_images(cache::Channel& ch) {
  for (Entry& e : watch(ch).subscribers) e.image_seq = 0;
}

void Subscribers::on_tick(uint64_t now) {
  if (!delayed_.empty()) deliver_due_delayed(now);
}

}  // namespace tw::broker
