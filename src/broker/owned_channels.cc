#include "broker/owned_channels.h"

#include "base/clock.h"
#include "broker/subscribers.h"

namespace tw::broker {

namespace {
constexpr uint64_t kNsPerSecond = 1'000'000'000ull;
}  // namespace

ChannelOwner::ChannelOwner(const RouterLimits& limits, Clock clock)
    : limits_(limits), clock_(clock ? std::move(clock) : Clock(monotonic_ns)) {}

OwnedChannels::OwnedChannels(const RouterLimits& limits, Clock clock)
    : ChannelOwner(limits, std::move(clock)), channels_(limits.max_channels) {}

OwnedChannels::~OwnedChannels() = default;

void OwnedChannels::name_by(cache::ChannelDirectory& directory) {
  naming_ = std::make_unique<DirectoryNaming>(directory);
}

void OwnedChannels::share_provider_loads(ProviderLoads& loads) {
  services_.balance_with(std::make_unique<SharedBalance>(loads));
}

void OwnedChannels::serve(Subscribers& subscribers) {
  subscribers_ = &subscribers;
  services_.serve(subscribers);
}

Outcome OwnedChannels::open(Outlet* by, std::string_view topic) { return services_.open(by, topic); }

// An interactive channel's state is its provider's; a broadcast channel's,
// whoever registered it (the session checked that it did).
Outcome OwnedChannels::publisher_status(Outlet*, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                                        std::string_view text) {
  cache::Channel* ch = channels_.get(id);
  if (!ch || services_.interactive(*ch)) return {wire::Code::NotFound, "status for a channel that is not broadcast"};
  if (state == wire::ChannelState::Closed) return {wire::Code::MalformedFrame, "a publisher may say STALE or OK only"};
  if (ch->state != state) subscribers_->status(*ch, state, code, text);
  return {};
}

void OwnedChannels::attached(cache::Channel& ch, bool exact, bool /*new_subscriber*/) {
  services_.attached(ch, exact);
}

void OwnedChannels::detached(cache::Channel& ch, bool exact) {
  services_.detached(ch, exact);
  consider_freeing(ch);
}

void OwnedChannels::outlet_gone(Outlet* outlet) {
  services_.outlet_gone(outlet);
  release_publisher(outlet);
}

cache::Channel* OwnedChannels::create_channel(std::string_view topic, wire::PayloadKind kind) {
  cache::ChannelId id = 0;
  if (!naming_->name(topic, kind, id)) return nullptr;
  cache::Channel* ch = channels_.create(topic, kind, id);
  if (!ch) return nullptr;
  routes_.resize(channels_.id_limit() - 1);
  services_.created(*ch);  // first: the patterns that attach now ask it about lingers
  subscribers_->created(*ch);
  return ch;
}

Outcome OwnedChannels::advertise(std::string_view topic, wire::PayloadKind kind, cache::ChannelId& out,
                                 Advertiser* by) {
  cache::Channel* ch = channels_.find(topic);
  if (ch && ch->kind != kind) return {wire::Code::KindMismatch, "topic already carries the other payload kind"};
  if (!ch) {
    if (channels_.size() >= limits_.max_channels && evict_kept(1) == 0) {
      return {wire::Code::TooManyChannels, "channel limit reached"};
    }
    if (by && !by->may_create) {
      return {wire::Code::ChannelQuota, by->refusal};
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

Outcome OwnedChannels::publish(cache::ChannelId id, std::span<const uint8_t> payload, bool image,
                               fields::Checked checked, const MessageOrigin& origin) {
  cache::Channel* ch = channels_.get(id);
  if (!ch) return {wire::Code::UnknownPublishId, "no such channel"};
  keep_retained(*ch, origin);
  if (!ch->apply(payload, image, checked)) {
    ++stats_.bad_payloads;
    return payload_refusal(payload);
  }
  ++stats_.publishes;
  ch->keep_attributes(origin.attributes);  // the last value's, for retained messages; the encoders read them
  route(*ch).transient = origin.transient;
  subscribers_->fan_out(*ch, payload, image, origin);
  return {};
}

Outcome OwnedChannels::snapshot(Outlet* outlet, std::string_view topic, uint32_t request_id) {
  cache::Channel* ch = channels_.find(topic);
  if (!ch || !ch->has_data()) return {wire::Code::NotFound, "no such topic in the cache"};
  outlet->send_image(*ch, request_id);
  return {};
}

Outcome OwnedChannels::list_channels_page(Outlet* outlet, ListingCursor& cursor, size_t max_visits) {
  RequesterOutlet* requester = outlet->as_requester();  // Router::list_channels_page checked it
  const std::string_view service = cursor.service;
  for (size_t visits = 0; visits < max_visits && cursor.next < channels_.id_limit(); ++visits) {
    const cache::ChannelId id = cursor.next++;
    if (!channels_.get(id)) continue;
    cache::Channel& ch = *channels_.get(id);
    if (!service.empty() && topic::service_of(ch.topic) != service) continue;
    // Only live channels: an interactive one that is neither served, asked
    // for, nor wanted by an exact subscription (released, NOT_FOUND, timed
    // out) is not listed, even while a wildcard subscription still watches it.
    if (!services_.listed(ch)) continue;
    wire::ChannelInfo info;
    info.request_id = cursor.request_id;
    info.channel_id = ch.id;
    info.state = ch.state;
    info.subscribers = subscribers_->subscriber_count(ch);
    info.seq = ch.seq;
    info.rate = route(ch).rate;
    info.topic = ch.topic;
    info.provider = services_.provider_name(ch);
    requester->send_channel_info(info);
  }
  cursor.done = cursor.next >= channels_.id_limit();
  return {};
}

// What an administrator may do to a channel (docs/operations.md, admin API).
Outcome OwnedChannels::close_by_admin(std::string_view topic) {
  cache::Channel* ch = channels_.find(topic);
  if (ch == nullptr) return {wire::Code::NotFound, "no such channel"};
  services_.close_by_admin(*ch);
  consider_freeing(*ch);
  return {};
}

void OwnedChannels::on_tick(uint64_t now) {
  services_.on_tick(now);
  if (!unused_.empty()) free_unused(now);
  relieve_pressure();
  if (now >= next_rate_sample_ns_) {
    sample_rates();
    next_rate_sample_ns_ = now + kNsPerSecond;
  }
}

void OwnedChannels::sample_rates() {
  for (size_t i = 0; i < routes_.size(); ++i) {
    const cache::Channel* ch = channels_.get(static_cast<cache::ChannelId>(i + 1));
    if (!ch) continue;
    const uint64_t seq = ch->seq;
    routes_[i].rate = static_cast<uint32_t>(seq - routes_[i].rate_seq);
    routes_[i].rate_seq = seq;
  }
}

}  // namespace tw::broker
