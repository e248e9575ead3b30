// The router's thread-tier roles (docs/ARCHITECTURE.md, "Threads").
//
// On an access point the router is a mirror: it keeps the subscriptions of
// its own connections and a copy of every channel they receive, so images,
// conflation and fan-out stay on the access point's thread; the gateways
// that own the channels send it each channel's IMAGE, UPDATEs and state
// changes for the patterns it holds (one upstream subscription per distinct
// pattern, however many local connections share it).
#include "broker/router.h"

namespace tw::broker {

void Router::hold_interest(std::string_view pattern) {
  auto [it, added] = interest_.try_emplace(std::string(pattern), 0);
  if (it->second++ == 0) upstream_->interest(pattern, true);
  (void)added;
}

void Router::drop_interest(std::string_view pattern) {
  auto it = interest_.find(std::string(pattern));
  if (it == interest_.end() || --it->second > 0) return;
  interest_.erase(it);
  upstream_->interest(pattern, false);
}

Outcome Router::settle(Outlet* outlet, std::span<const std::string_view> patterns, uint32_t request_id) {
  owner_.check("Router");
  if (!upstream_ || !upstream_->settle(outlet, patterns, request_id)) return {};
  Outcome pending;
  pending.pending = true;
  return pending;
}

// A mirror with no local subscriber of a channel (live or delayed) is no
// longer sent it: the copy is forgotten, and the gateway sends a fresh IMAGE
// (and the state, if not OK) when one comes back.
void Router::count_subscribers(const cache::Channel& ch) {
  const Route& r = routes_[ch.id - 1];
  if (r.subscribers.empty() && r.delayed.empty()) {
    // Its state goes too: a recovery while nobody here watched is never sent.
    cache::Channel& copy = *channels_.get(ch.id);
    copy.clear_image();
    copy.state = wire::ChannelState::Ok;
  }
  upstream_->subscribers_changed(ch.id, subscriber_count(r));
}

void Router::mirror_channel(cache::ChannelId id, std::string_view topic, wire::PayloadKind kind) {
  owner_.check("Router");
  if (channels_.get(id)) return;
  if (!channels_.create(topic, kind, id)) return;
  routes_.resize(channels_.id_limit() - 1);
  cache::Channel& ch = *channels_.get(id);
  patterns_.match(topic, [&](const PatternRef& ref) { add_ref(ch, ref); });
}

void Router::mirror_message(cache::ChannelId id, uint64_t seq, std::span<const uint8_t> payload,
                            std::span<const uint8_t> frame, bool image, bool prior, const MessageOrigin& origin) {
  owner_.check("Router");
  cache::Channel* ch = channels_.get(id);
  // Nobody here receives it (the gateway has not seen the unsubscribe yet),
  // or an UPDATE before the IMAGE that restarts a forgotten copy: not ours.
  if (!ch || (route(*ch).subscribers.empty() && route(*ch).delayed.empty()) || (!image && !ch->has_data())) return;
  // Validated once already, by the access point that read it from its
  // publisher, or encoded by the gateway from its cache: checking it again
  // here would only cost time.
  if (!ch->apply(payload, image, fields::Checked::Already)) {
    ++stats_.bad_payloads;
    return;
  }
  ch->seq = seq;  // the owner's numbering, the same on every access point
  ch->keep_properties(origin.properties);  // from the gateway's Op::Origin, if any
  ++stats_.publishes;
  // The gateway's frame is in the tier link's format, the native protocol's:
  // native sessions send it by reference into the ring; others encode their own.
  StreamFrames frames(fanout_, *ch, payload, image);
  if (prior) {
    // The image the gateway sent as the subscription reached it: local
    // subscribers waiting for it get it as state older than their
    // subscription. Its frame's request_id marks it for the link only, so
    // it is never sent on by reference.
    send_pending_images(*ch, true);
  } else {
    frames.pin(StreamEncoder::kNativeSlot, frame);
  }
  origin_ = origin;
  fan_out(*ch, frames, payload, image);
  origin_ = {};
}

void Router::mirror_status(cache::ChannelId id, wire::ChannelState state, wire::Code code, std::string_view text) {
  owner_.check("Router");
  cache::Channel* ch = channels_.get(id);
  if (!ch) return;
  if (state == wire::ChannelState::Closed) return end_streams(*ch, code, text);
  fan_out_status(*ch, state, code, text);
}

// The owner closed the channel: as Router::close_channel, for the local
// subscribers (exact subscriptions end; wildcards stay attached).
void Router::end_streams(cache::Channel& ch, wire::Code code, std::string_view text) {
  fan_out_status(ch, wire::ChannelState::Closed, code, text);
  std::vector<Outlet*> ended;
  for (const Entry& e : route(ch).subscribers) {
    if (e.exact > 0) ended.push_back(e.outlet);
  }
  const std::string topic = ch.topic;
  add_delayed_exact(ch, ended);
  for (Outlet* outlet : ended) unsubscribe(outlet, topic);
  for (Entry& e : route(ch).subscribers) e.image_seq = 0;
  ch.clear_image();
  ch.state = wire::ChannelState::Ok;
  reset_delayed(ch);
}

void Router::set_weight(const Outlet* outlet, cache::ChannelId id, uint32_t count) {
  owner_.check("Router");
  if (!channels_.get(id)) return;
  if (Entry* e = find_entry(routes_[id - 1].subscribers, outlet)) e->weight = count;
}

}  // namespace tw::broker
