#include "broker/router.h"

#include "broker/mirrored_channels.h"
#include "broker/owned_channels.h"

namespace tw::broker {

Router::Router(const RouterLimits& limits, output::Fanout& fanout, Clock clock)
    : fanout_(fanout), owned_(std::make_unique<OwnedChannels>(limits, std::move(clock))) {
  plug(*owned_);
}

Router::Router(output::Fanout& fanout, ChannelOwner& owner) : fanout_(fanout) { plug(owner); }

Router::~Router() = default;

void Router::plug(ChannelOwner& owner) {
  owner_ = &owner;
  subscribers_ = std::make_unique<Subscribers>(owner.limits(), fanout_, owner.clock(), owner.table(), owner,
                                               owner.stats());
  owner.serve(*subscribers_);
  subscribers_->keep_delay_history();
}

MirroredChannels& Router::attach_upstream(Upstream* upstream) {
  owner_thread_.check("Router");
  auto mirror = std::make_unique<MirroredChannels>(owner_->limits(), owner_->clock(), *upstream);
  MirroredChannels& plugged = *mirror;
  plug(plugged);
  owned_ = std::move(mirror);
  return plugged;
}

void Router::on_interest(std::function<void(std::string_view, bool)> fn) {
  if (auto* owned = dynamic_cast<OwnedChannels*>(owner_)) owned->on_interest(std::move(fn));
}

void Router::claim_owner() {
  owner_thread_.claim();
  owner_->claim_owner();
}

Outcome Router::check_subscribe(Outlet* outlet, std::string_view pattern, uint32_t delay_ms) const {
  owner_thread_.check("Router");
  return subscribers_->check_subscribe(outlet, pattern, delay_ms);
}

Outcome Router::subscribe(Outlet* outlet, std::string_view pattern, SlowPolicy policy, uint32_t conflate_ms,
                          uint32_t delay_ms) {
  owner_thread_.check("Router");
  return subscribers_->subscribe(outlet, pattern, policy, conflate_ms, delay_ms);
}

Outcome Router::unsubscribe(Outlet* outlet, std::string_view pattern) {
  owner_thread_.check("Router");
  return subscribers_->unsubscribe(outlet, pattern);
}

void Router::resend_images(Outlet* outlet, std::string_view pattern) {
  owner_thread_.check("Router");
  subscribers_->resend_images(outlet, pattern);
}

Outcome Router::settle(Outlet* outlet, std::span<const std::string_view> patterns, uint32_t request_id) {
  owner_thread_.check("Router");
  return owner_->settle(outlet, patterns, request_id);
}

void Router::remove_outlet(Outlet* outlet) {
  owner_thread_.check("Router");
  owner_->outlet_gone(outlet);
  subscribers_->remove_outlet(outlet);
}

void Router::reentitle(Outlet* outlet, const EntitledFn& before) {
  owner_thread_.check("Router");
  subscribers_->reentitle(outlet, before);
}

size_t Router::subscription_count(Outlet* outlet) const {
  owner_thread_.check("Router");
  return subscribers_->subscription_count(outlet);
}

std::vector<HeldSubscription> Router::subscriptions_of(const Outlet* outlet) const {
  owner_thread_.check("Router");
  return subscribers_->subscriptions_of(outlet);
}

bool Router::delivers(const Outlet* outlet, cache::ChannelId id) const {
  return policy_of(outlet, id) != SlowPolicy::Default;
}

SlowPolicy Router::policy_of(const Outlet* outlet, cache::ChannelId id) const {
  owner_thread_.check("Router");
  return subscribers_->policy_of(outlet, id);
}

uint32_t Router::conflate_ms_of(const Outlet* outlet, cache::ChannelId id) const {
  owner_thread_.check("Router");
  return subscribers_->conflate_ms_of(outlet, id);
}

void Router::set_weight(const Outlet* outlet, cache::ChannelId id, uint32_t count) {
  owner_thread_.check("Router");
  subscribers_->set_weight(outlet, id, count);
}

Outcome Router::snapshot(Outlet* outlet, std::string_view topic, uint32_t request_id) {
  owner_thread_.check("Router");
  if (auto e = topic::validate_topic(topic, owner_->limits().topic); e != topic::Error::Ok) {
    return {wire::Code::InvalidTopic, topic::describe(e)};
  }
  return owner_->snapshot(outlet, topic, request_id);
}

Outcome Router::advertise(std::string_view topic, wire::PayloadKind kind, cache::ChannelId& out, Advertiser* by) {
  owner_thread_.check("Router");
  if (auto e = topic::validate_topic(topic, owner_->limits().topic); e != topic::Error::Ok) {
    return {wire::Code::InvalidTopic, topic::describe(e)};
  }
  return owner_->advertise(topic, kind, out, by);
}

Outcome Router::provide(Outlet* outlet, std::string_view service, std::string_view pattern) {
  owner_thread_.check("Router");
  const topic::Limits& limits = owner_->limits().topic;
  if (service.find('/') != std::string_view::npos || topic::validate_topic(service, limits) != topic::Error::Ok) {
    return {wire::Code::InvalidTopic, "a service is one valid topic level"};
  }
  if (!pattern.empty() && (topic::validate_pattern(pattern, limits) != topic::Error::Ok ||
                           topic::service_of(pattern) != service)) {
    return {wire::Code::InvalidTopic, "the pattern must be valid and start with the service"};
  }
  return owner_->provide(outlet, service, pattern);
}

Outcome Router::withdraw(Outlet* outlet, std::string_view service) {
  owner_thread_.check("Router");
  return owner_->withdraw(outlet, service);
}

Outcome Router::provider_publish(Outlet* outlet, cache::ChannelId id, std::span<const uint8_t> payload, bool image,
                                 fields::Checked checked) {
  owner_thread_.check("Router");
  return owner_->provider_publish(outlet, id, payload, image, checked);
}

Outcome Router::provider_status(Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                                std::string_view text) {
  owner_thread_.check("Router");
  return owner_->provider_status(outlet, id, state, code, text);
}

Outcome Router::publisher_status(Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                                 std::string_view text) {
  owner_thread_.check("Router");
  return owner_->publisher_status(outlet, id, state, code, text);
}

Outcome Router::list_channels(Outlet* outlet, std::string_view service, uint32_t request_id) {
  ListingCursor cursor{std::string(service), request_id};
  Outcome outcome;
  while (!cursor.done && !cursor.waiting && outcome.ok()) outcome = list_channels_page(outlet, cursor, ~size_t{0});
  return outcome;
}

Outcome Router::list_channels_page(Outlet* outlet, ListingCursor& cursor, size_t max_visits) {
  owner_thread_.check("Router");
  if (!outlet->as_requester()) return {wire::Code::UnknownType, "this connection's protocol cannot list channels"};
  return owner_->list_channels_page(outlet, cursor, max_visits);
}

void Router::listing_page_answered(ListingCursor& cursor, cache::ChannelId next, bool shard_done) {
  owner_thread_.check("Router");
  cursor.waiting = false;
  cursor.next = next;
  if (!shard_done) return;
  cursor.next = 1;
  if (++cursor.shard >= owner_->listing_shards()) cursor.done = true;
}

Outcome Router::close_by_admin(std::string_view topic) {
  owner_thread_.check("Router");
  return owner_->close_by_admin(topic);
}

void Router::on_tick() {
  owner_thread_.check("Router");
  const uint64_t now = owner_->clock()();
  owner_->on_tick(now);
  subscribers_->on_tick(now);
}

std::vector<std::pair<std::string, uint32_t>> Router::provider_loads(std::string_view service) const {
  owner_thread_.check("Router");
  return owner_->provider_loads(service);
}

}  // namespace tw::broker
