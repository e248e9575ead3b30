#include "broker/mirrored_channels.h"

#include "broker/subscribers.h"

namespace tw::broker {

MirroredChannels::MirroredChannels(const RouterLimits& limits, Clock clock, Upstream& upstream)
    : ChannelOwner(limits, std::move(clock)), upstream_(upstream), copies_(limits.max_channels) {}

void MirroredChannels::serve(Subscribers& subscribers) { subscribers_ = &subscribers; }

void MirroredChannels::interest(std::string_view pattern, bool add) {
  if (add) {
    if (interest_[std::string(pattern)]++ == 0) upstream_.interest(pattern, true);
    return;
  }
  auto it = interest_.find(std::string(pattern));
  if (it == interest_.end() || --it->second > 0) return;
  interest_.erase(it);
  upstream_.interest(pattern, false);
}

Outcome MirroredChannels::settle(Outlet* outlet, std::span<const std::string_view> patterns, uint32_t request_id) {
  if (!upstream_.settle(outlet, patterns, request_id)) return {};
  Outcome pending;
  pending.pending = true;
  return pending;
}

void MirroredChannels::attached(cache::Channel& ch, bool /*exact*/, bool new_subscriber) {
  if (new_subscriber) count_subscribers(ch);
}

void MirroredChannels::detached(cache::Channel& ch, bool /*exact*/) { count_subscribers(ch); }

// A mirror with no local subscriber of a channel (live or delayed) is no
// longer sent it: the copy is forgotten, and the gateway sends a fresh IMAGE
// (and the state, if not OK) when one comes back.
void MirroredChannels::count_subscribers(cache::Channel& ch) {
  if (!subscribers_->watched(ch)) {
    // Its state goes too: a recovery while nobody here watched is never sent.
    ch.clear_image();
    ch.state = wire::ChannelState::Ok;
  }
  upstream_.subscribers_changed(ch.id, subscribers_->subscriber_count(ch));
}

Outcome MirroredChannels::provider_publish(Outlet* outlet, cache::ChannelId id, std::span<const uint8_t> payload,
                                           bool image, fields::Checked /*checked*/) {
  // Interactive channels carry field lists: a malformed one fails its sender here, at once.
  if (!fields::validate(payload)) return payload_refusal(payload);
  upstream_.provider_publish(outlet, id, payload, image);
  return {};
}

Outcome MirroredChannels::provider_status(Outlet* outlet, cache::ChannelId id, wire::ChannelState state,
                                          wire::Code code, std::string_view text) {
  upstream_.provider_status(outlet, id, state, code, text);
  return {};
}

Outcome MirroredChannels::snapshot(Outlet* outlet, std::string_view topic, uint32_t request_id) {
  cache::Channel* ch = copies_.find(topic);
  if (ch && ch->has_data()) {
    outlet->send_image(*ch, request_id);
    return {};
  }
  upstream_.snapshot(outlet, topic, request_id);
  return {wire::Code::Ok, "", true};
}

// Asked of the gateways, one page at a time (pending, cursor.waiting until
// Router::listing_page_answered).
Outcome MirroredChannels::list_channels_page(Outlet* outlet, ListingCursor& cursor, size_t /*max_visits*/) {
  if (!cursor.waiting && !cursor.done) {
    upstream_.list_channels(outlet, cursor.service, cursor.request_id, cursor.shard, cursor.next);
    cursor.waiting = true;
  }
  return {wire::Code::Ok, "", true};
}

Outcome MirroredChannels::close_by_admin(std::string_view topic) {
  if (copies_.find(topic) == nullptr) return {wire::Code::NotFound, "no such channel"};
  return {wire::Code::NotFound, "a mirror does not own its channels"};
}

void MirroredChannels::channel(cache::ChannelId id, std::string_view topic, wire::PayloadKind kind) {
  owner_.check("MirroredChannels");
  if (copies_.get(id)) return;
  if (cache::Channel* ch = copies_.create(topic, kind, id)) subscribers_->created(*ch);
}

void MirroredChannels::message(cache::ChannelId id, uint64_t seq, std::span<const uint8_t> payload,
                               std::span<const uint8_t> frame, bool image, bool prior, const MessageOrigin& origin) {
  owner_.check("MirroredChannels");
  cache::Channel* ch = copies_.get(id);
  // Nobody here receives it (the gateway has not seen the unsubscribe yet),
  // or an UPDATE before the IMAGE that restarts a forgotten copy: not ours.
  if (!ch || !subscribers_->watched(*ch) || (!image && !ch->has_data())) return;
  // Validated once already, by the access point that read it from its
  // publisher, or encoded by the gateway from its cache: checking it again
  // here would only cost time.
  keep_retained(*ch, origin);
  if (!ch->apply(payload, image, fields::Checked::Already)) {
    ++stats_.bad_payloads;
    return;
  }
  ch->seq = seq;  // the owner's numbering, the same on every access point
  ch->keep_attributes(origin.attributes);  // from the gateway's Op::Origin, if any
  ++stats_.publishes;
  subscribers_->relay(*ch, payload, frame, image, prior, origin);
}

void MirroredChannels::status(cache::ChannelId id, wire::ChannelState state, wire::Code code, std::string_view text) {
  owner_.check("MirroredChannels");
  cache::Channel* ch = copies_.get(id);
  if (!ch) return;
  // The owner closed the channel: as its own subscribers, the local ones see
  // their exact subscriptions end; wildcards stay attached.
  if (state == wire::ChannelState::Closed) return subscribers_->end_streams(*ch, code, text);
  subscribers_->status(*ch, state, code, text);
}

// Normally nobody here receives it any more (the gateway freed it because no
// access point subscribed). A subscription that raced the free keeps its
// entries: the copy stays, inert, and the topic's next channel comes under a new id.
void MirroredChannels::forget(cache::ChannelId id) {
  owner_.check("MirroredChannels");
  cache::Channel* ch = copies_.get(id);
  if (!ch || subscribers_->watched(*ch)) return;
  subscribers_->freed(id);
  copies_.erase(id);
}

}  // namespace tw::broker
