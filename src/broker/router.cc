#include "broker/router.h"

#include <algorithm>

#include "base/clock.h"
#include "broker/services.h"
#include "wire/codec.h"

namespace tw::broker {

Router::Router(const RouterLimits& limits, Fanout& fanout, Clock clock)
    : limits_(limits),
      fanout_(fanout),
      clock_(clock ? std::move(clock) : Clock(monotonic_ns)),
      channels_(limits.max_channels) {}

Router::~Router() = default;

namespace {
size_t policy_slot(SlowPolicy p) { return static_cast<size_t>(p) - 1; }  // Conflate = 0 ... Disconnect = 2
}  // namespace

SlowPolicy Router::Entry::policy() const {
  for (size_t i = policy_refs.size(); i-- > 0;) {
    if (policy_refs[i] > 0) return static_cast<SlowPolicy>(i + 1);
  }
  return SlowPolicy::Conflate;
}

Outcome Router::check_subscribe(Outlet* outlet, std::string_view pattern, uint32_t delay_ms) const {
  owner_.check("Router");
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

Outcome Router::subscribe(Outlet* outlet, std::string_view pattern, SlowPolicy policy, uint32_t conflate_ms,
                          uint32_t delay_ms) {
  owner_.check("Router");
  if (Outcome check = check_subscribe(outlet, pattern, delay_ms); !check.ok()) return check;
  auto& mine = patterns_by_outlet_[outlet];
  if (mine.find(pattern) != mine.end()) return {};
  if (policy == SlowPolicy::Default) policy = limits_.default_policy;
  mine.emplace(std::string(pattern), Held{policy, conflate_ms, delay_ms});
  const bool exact = !topic::is_wildcard(pattern);
  const PatternRef ref{outlet, exact, policy, conflate_ms, delay_ms};
  patterns_.insert(pattern, ref);
  if (upstream_) hold_interest(pattern);
  channels_.match(pattern, [&](cache::Channel& ch) { add_ref(ch, ref); });
  if (!exact) return {};
  Service* service = interactive_service(pattern);
  if (!service || open_exact(outlet, pattern, *service)) return {};
  unsubscribe(outlet, pattern);
  return {wire::Code::TooManyChannels, "channel limit reached"};
}

Outcome Router::unsubscribe(Outlet* outlet, std::string_view pattern) {
  owner_.check("Router");
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

void Router::resend_images(Outlet* outlet, std::string_view pattern) {
  owner_.check("Router");
  channels_.match(pattern, [&](cache::Channel& ch) {
    Entry* e = find_entry(route(ch).subscribers, outlet);
    if (!e || !ch.has_data()) return;
    outlet->send_prior_image(ch, e->policy());
    e->image_seq = ch.seq;
  });
}

void Router::forget_pattern(Outlet* outlet, std::string_view pattern, const Held& held) {
  const PatternRef ref = held_ref(outlet, pattern, held);
  patterns_.erase(pattern, ref);
  channels_.match(pattern, [&](cache::Channel& ch) { drop_ref(ch, ref); });
  if (upstream_) drop_interest(pattern);
}

void Router::remove_outlet(Outlet* outlet) {
  owner_.check("Router");
  if (upstream_) upstream_->outlet_gone(outlet);
  for (auto it = services_.begin(); it != services_.end(); ++it) {
    Service& service = *it->second;
    if (Provider* p = service.find(outlet)) lose_provider(p);
  }
  release_publisher(outlet);
  auto it = patterns_by_outlet_.find(outlet);
  if (it == patterns_by_outlet_.end()) return;
  HeldPatterns held_list = std::move(it->second);
  patterns_by_outlet_.erase(it);
  for (const auto& [pattern, held] : held_list) forget_pattern(outlet, pattern, held);
}

size_t Router::subscription_count(Outlet* outlet) const {
  owner_.check("Router");
  auto it = patterns_by_outlet_.find(outlet);
  return it == patterns_by_outlet_.end() ? 0 : it->second.size();
}

std::vector<Router::HeldSubscription> Router::subscriptions_of(const Outlet* outlet) const {
  owner_.check("Router");
  std::vector<HeldSubscription> out;
  auto it = patterns_by_outlet_.find(const_cast<Outlet*>(outlet));
  if (it == patterns_by_outlet_.end()) return out;
  for (const auto& [pattern, held] : it->second)
    out.push_back({pattern, held.policy, held.conflate_ms, held.delay_ms});
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.pattern < b.pattern; });
  return out;
}

bool Router::delivers(const Outlet* outlet, cache::ChannelId id) const {
  owner_.check("Router");
  return policy_of(outlet, id) != SlowPolicy::Default;
}

SlowPolicy Router::policy_of(const Outlet* outlet, cache::ChannelId id) const {
  owner_.check("Router");
  if (is_delayed_id(id)) {
    const Entry* e = delayed_entry(outlet, id);
    return e ? e->policy() : SlowPolicy::Default;
  }
  if (id == 0 || id > routes_.size()) return SlowPolicy::Default;
  const Entry* e = find_entry(routes_[id - 1].subscribers, outlet);
  return e ? e->policy() : SlowPolicy::Default;
}

uint32_t Router::conflate_ms_of(const Outlet* outlet, cache::ChannelId id) const {
  owner_.check("Router");
  if (is_delayed_id(id)) {
    const Entry* e = delayed_entry(outlet, id);
    return e ? e->conflate_ms() : 0;
  }
  if (id == 0 || id > routes_.size()) return 0;
  const Entry* e = find_entry(routes_[id - 1].subscribers, outlet);
  return e ? e->conflate_ms() : 0;
}

uint32_t Router::min_conflate_ms(const Outlet* outlet, std::string_view topic, uint32_t delay_ms) const {
  auto it = patterns_by_outlet_.find(const_cast<Outlet*>(outlet));
  if (it == patterns_by_outlet_.end()) return 0;
  uint32_t best = 0;
  for (const auto& [pattern, h] : it->second) {
    if (h.delay_ms != delay_ms || h.conflate_ms == 0 || (best != 0 && h.conflate_ms >= best)) continue;
    if (topic::matches(pattern, topic)) best = h.conflate_ms;
  }
  return best;
}

namespace {
void count_interval(uint32_t& realtime_refs, uint32_t& min_ms, uint32_t conflate_ms) {
  if (conflate_ms == 0) {
    ++realtime_refs;
  } else if (min_ms == 0 || conflate_ms < min_ms) {
    min_ms = conflate_ms;
  }
}
}  // namespace

void Router::add_ref(cache::Channel& ch, const PatternRef& ref) {
  if (ref.exact || ref.outlet->entitled(ch.topic, ref.delay_ms)) add_counted_ref(ch, ref);
}

void Router::drop_ref(cache::Channel& ch, const PatternRef& ref) {
  if (ref.exact || ref.outlet->entitled(ch.topic, ref.delay_ms)) drop_counted_ref(ch, ref);
}

void Router::add_counted_ref(cache::Channel& ch, const PatternRef& ref) {
  Route& r = route(ch);
  if (ref.exact) {
    ++r.exact_refs;
    if (r.linger_until_ns) {
      r.linger_until_ns = 0;
      lingering_.erase(ch.id);
    }
  }
  if (ref.delay_ms != 0) return add_delayed_ref(ch, ref);  // never in the real-time path
  if (attach(r.subscribers, ch, ref) && upstream_) count_subscribers(ch);
}

uint32_t Router::subscriber_count(const Route& r) const {
  uint32_t count = 0;
  for (const Entry& e : r.subscribers) count += e.weight;
  for (const DelayedStream* d : r.delayed) {
    for (const Entry& e : d->subscribers) count += e.weight;
  }
  return count;
}

bool Router::attach(std::vector<Entry>& list, const cache::Channel& shown, const PatternRef& ref) {
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

void Router::drop_counted_ref(cache::Channel& ch, const PatternRef& ref) {
  Outlet* outlet = ref.outlet;
  const bool exact = ref.exact;
  Route& r = route(ch);
  auto& list = ref.delay_ms != 0 ? delayed_subscribers(ch, ref.delay_ms) : r.subscribers;
  for (size_t i = 0; i < list.size(); ++i) {
    Entry& e = list[i];
    if (e.outlet != outlet) continue;
    e.exact -= exact;
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
  if (upstream_) count_subscribers(ch);
  if (exact) --r.exact_refs;
  if (exact && r.exact_refs == 0 && r.interactive) {
    if (r.provider || r.pending) {
      r.linger_until_ns = clock_() + limits_.release_linger_ms * 1'000'000ull;
      lingering_.insert(ch.id);
    } else if (Service* s = interactive_service(ch.topic)) {
      s->orphans.erase(ch.id);  // nobody waits for it any more
    }
  }
  consider_freeing(ch);
}

cache::Channel* Router::create_channel(std::string_view topic, wire::PayloadKind kind) {
  cache::ChannelId id = 0;
  if (directory_) {
    auto named = directory_->intern(topic, kind);
    if (named.result != cache::ChannelDirectory::Intern::Ok) return nullptr;
    id = named.id;
  }
  cache::Channel* ch = channels_.create(topic, kind, id);
  if (!ch) return nullptr;
  routes_.resize(channels_.id_limit() - 1);
  patterns_.match(topic, [&](const PatternRef& ref) { add_ref(*ch, ref); });
  return ch;
}

Outcome Router::advertise(std::string_view topic, wire::PayloadKind kind, cache::ChannelId& out, Advertiser* by) {
  owner_.check("Router");
  if (auto e = topic::validate_topic(topic, limits_.topic); e != topic::Error::Ok) {
    return {wire::Code::InvalidTopic, topic::describe(e)};
  }
  if (upstream_) return upstream_->advertise(topic, kind, out, by);
  cache::Channel* ch = channels_.find(topic);
  if (ch && ch->kind != kind) return {wire::Code::KindMismatch, "topic already carries the other payload kind"};
  if (!ch) {
    if (channels_.size() >= limits_.max_channels && evict_kept(1) == 0) {
      return {wire::Code::TooManyChannels, "channel limit reached"};
    }
    if (by && !by->may_create) {
      return {wire::Code::ChannelQuota, "this connection created max_channels_per_connection channels already"};
    }
    ch = create_channel(topic, kind);
    if (!ch) return {wire::Code::TooManyChannels, "channel limit reached"};
    if (by) by->created = true;
  }
  if (by && by->outlet) hold_publisher(by->outlet, *ch);
  // Unheld (REST publishes; a gateway's publishers are held in the directory,
  // checked when it would free): it lingers, then is kept or freed.
  consider_freeing(*ch);
  out = ch->id;
  return {};
}

Outcome Router::publish(cache::ChannelId id, std::span<const uint8_t> payload, bool image, fields::Checked checked,
                        const MessageOrigin& origin) {
  owner_.check("Router");
  if (upstream_) return upstream_->publish(id, payload, image, origin);
  cache::Channel* ch = channels_.get(id);
  if (!ch) return {wire::Code::UnknownPublishId, "no such channel"};
  if (!ch->apply(payload, image, checked)) {
    ++stats_.bad_payloads;
    return payload_refusal(payload);
  }
  ++stats_.publishes;
  ch->keep_properties(origin.properties);  // the last value's, for retained messages; the encoders read them
  route(*ch).transient = origin.transient;
  origin_ = origin;
  fan_out(*ch, payload, image);
  origin_ = {};
  return {};
}

void Router::fan_out(cache::Channel& ch, std::span<const uint8_t> payload, bool image) {
  StreamFrames frames(fanout_, ch, payload, image);
  fan_out(ch, frames, payload, image);
}

void Router::fan_out(cache::Channel& ch, StreamFrames& frames, std::span<const uint8_t> payload, bool image) {
  if (!route(ch).delayed.empty()) record_delayed(ch, payload, image);
  if (route(ch).subscribers.empty()) return;
  // Subscribers that have no image yet get one (it already holds this message).
  send_pending_images(ch);
  deliver(route(ch).subscribers, ch, frames, payload, image);
}

void Router::deliver(std::vector<Entry>& list, const cache::Channel& ch, StreamFrames& frames,
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

void Router::send_pending_images(cache::Channel& ch, bool prior) {
  for (Entry& e : route(ch).subscribers) {
    if (e.has_image()) continue;
    if (prior) {
      e.outlet->send_prior_image(ch, e.policy());
    } else {
      e.outlet->send_stream_image(ch, e.policy());
    }
    e.image_seq = ch.seq;
  }
}

void Router::fan_out_status(cache::Channel& ch, wire::ChannelState state, wire::Code code, std::string_view text) {
  ch.state = state;
  for (Entry& e : route(ch).subscribers) e.outlet->send_status(ch, state, code, text, !e.has_image());
  if (!route(ch).delayed.empty()) fan_out_delayed_status(ch, state, code, text);
}

Outcome Router::snapshot(Outlet* outlet, std::string_view topic, uint32_t request_id) {
  owner_.check("Router");
  if (auto e = topic::validate_topic(topic, limits_.topic); e != topic::Error::Ok) {
    return {wire::Code::InvalidTopic, topic::describe(e)};
  }
  cache::Channel* ch = channels_.find(topic);
  if (upstream_ && (!ch || !ch->has_data())) {
    upstream_->snapshot(outlet, topic, request_id);
    return {wire::Code::Ok, "", true};
  }
  if (!ch || !ch->has_data()) return {wire::Code::NotFound, "no such topic in the cache"};
  outlet->send_image(*ch, request_id);
  return {};
}

Outcome Router::list_channels(Outlet* outlet, std::string_view service, uint32_t request_id) {
  ListingCursor cursor{std::string(service), request_id};
  Outcome outcome;
  while (!cursor.done && !cursor.waiting) outcome = list_channels_page(outlet, cursor, ~size_t{0});
  return outcome;
}

Outcome Router::list_channels_page(Outlet* outlet, ListingCursor& cursor, size_t max_visits) {
  owner_.check("Router");
  if (upstream_) {
    if (!cursor.waiting && !cursor.done) {
      upstream_->list_channels(outlet, cursor.service, cursor.request_id, cursor.shard, cursor.next);
      cursor.waiting = true;
    }
    return {wire::Code::Ok, "", true};
  }
  const std::string_view service = cursor.service;
  for (size_t visits = 0; visits < max_visits && cursor.next < channels_.id_limit(); ++visits) {
    const cache::ChannelId id = cursor.next++;
    if (!channels_.get(id)) continue;
    cache::Channel& ch = *channels_.get(id);
    if (!service.empty() && topic::service_of(ch.topic) != service) continue;
    const Route& r = route(ch);
    // Only live channels: an interactive one that is neither served, asked
    // for, nor wanted by an exact subscription (released, NOT_FOUND, timed
    // out) is not listed, even while a wildcard subscription still watches it.
    if (r.interactive && !r.provider && !r.pending && r.exact_refs == 0) continue;
    wire::ChannelInfo info;
    info.request_id = cursor.request_id;
    info.channel_id = ch.id;
    info.state = ch.state;
    info.subscribers = subscriber_count(r);
    info.seq = ch.seq;
    info.rate = r.rate;
    info.topic = ch.topic;
    info.provider = r.provider ? r.provider->outlet->name() : std::string_view{};
    outlet->send_channel_info(info);
  }
  cursor.done = cursor.next >= channels_.id_limit();
  return {};
}

void Router::listing_page_answered(ListingCursor& cursor, cache::ChannelId next, bool shard_done) {
  owner_.check("Router");
  cursor.waiting = false;
  cursor.next = next;
  if (!shard_done) return;
  cursor.next = 1;
  if (++cursor.shard >= (upstream_ ? upstream_->shards() : 1)) cursor.done = true;
}

}  // namespace tw::broker
