#include "broker/router.h"

#include <algorithm>

#include "wire/codec.h"

namespace tw::broker {

Router::Router(const RouterLimits& limits, Fanout& fanout)
    : limits_(limits), fanout_(fanout), channels_(limits.max_channels) {}

Outcome Router::check_subscribe(Outlet* outlet, std::string_view pattern) const {
  if (auto e = topic::validate_pattern(pattern, limits_.topic); e != topic::Error::Ok) {
    return {wire::Code::InvalidTopic, topic::describe(e)};
  }
  auto it = patterns_by_outlet_.find(outlet);
  if (it == patterns_by_outlet_.end()) return {};
  const auto& mine = it->second;
  if (std::find(mine.begin(), mine.end(), pattern) != mine.end()) return {};
  if (mine.size() >= limits_.max_subscriptions) {
    return {wire::Code::TooManySubscriptions, "subscription limit per connection reached"};
  }
  return {};
}

Outcome Router::subscribe(Outlet* outlet, std::string_view pattern) {
  if (Outcome check = check_subscribe(outlet, pattern); !check.ok()) return check;
  auto& mine = patterns_by_outlet_[outlet];
  if (std::find(mine.begin(), mine.end(), pattern) != mine.end()) return {};
  mine.emplace_back(pattern);
  patterns_.insert(pattern, outlet);
  channels_.match(pattern, [&](cache::Channel& ch) { add_ref(ch, outlet); });
  return {};
}

Outcome Router::unsubscribe(Outlet* outlet, std::string_view pattern) {
  auto it = patterns_by_outlet_.find(outlet);
  if (it == patterns_by_outlet_.end()) return {wire::Code::NotSubscribed, "no such subscription"};
  auto& mine = it->second;
  auto pos = std::find(mine.begin(), mine.end(), pattern);
  if (pos == mine.end()) return {wire::Code::NotSubscribed, "no such subscription"};
  patterns_.erase(pattern, outlet);
  channels_.match(pattern, [&](cache::Channel& ch) { drop_ref(ch, outlet); });
  mine.erase(pos);
  if (mine.empty()) patterns_by_outlet_.erase(it);
  return {};
}

void Router::remove_outlet(Outlet* outlet) {
  auto it = patterns_by_outlet_.find(outlet);
  if (it == patterns_by_outlet_.end()) return;
  for (const std::string& pattern : it->second) {
    patterns_.erase(pattern, outlet);
    channels_.match(pattern, [&](cache::Channel& ch) { drop_ref(ch, outlet); });
  }
  patterns_by_outlet_.erase(it);
}

size_t Router::subscription_count(Outlet* outlet) const {
  auto it = patterns_by_outlet_.find(outlet);
  return it == patterns_by_outlet_.end() ? 0 : it->second.size();
}

void Router::add_ref(cache::Channel& ch, Outlet* outlet) {
  Entries& list = entries(ch);
  for (Entry& e : list) {
    if (e.outlet == outlet) {
      ++e.refs;
      return;
    }
  }
  list.push_back({outlet, 1, 0});
  if (ch.has_data()) {
    outlet->send_image(ch, 0);
    list.back().image_seq = ch.seq;
  }
}

void Router::drop_ref(cache::Channel& ch, Outlet* outlet) {
  Entries& list = entries(ch);
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].outlet != outlet) continue;
    if (--list[i].refs == 0) {
      list[i] = list.back();
      list.pop_back();
    }
    return;
  }
}

Outcome Router::advertise(std::string_view topic, wire::PayloadKind kind, cache::ChannelId& out) {
  if (auto e = topic::validate_topic(topic, limits_.topic); e != topic::Error::Ok) {
    return {wire::Code::InvalidTopic, topic::describe(e)};
  }
  if (cache::Channel* ch = channels_.find(topic)) {
    if (ch->kind != kind) return {wire::Code::KindMismatch, "topic already carries the other payload kind"};
    out = ch->id;
    return {};
  }
  cache::Channel* ch = channels_.create(topic, kind);
  if (!ch) return {wire::Code::TooManyChannels, "channel limit reached"};
  subscribers_.emplace_back();
  patterns_.match(topic, [&](Outlet* const& outlet) { add_ref(*ch, outlet); });
  out = ch->id;
  return {};
}

Outcome Router::publish(cache::ChannelId id, std::span<const uint8_t> payload, bool image) {
  cache::Channel* ch = channels_.get(id);
  if (!ch) return {wire::Code::UnknownPublishId, "no such channel"};
  if (!ch->apply(payload, image)) {
    ++stats_.bad_payloads;
    return {wire::Code::BadPayload, "malformed field list"};
  }
  ++stats_.publishes;
  Entries& list = entries(*ch);
  if (list.empty()) return {};
  // Subscribers that have no image yet get one (it already holds this
  // message); they may reset the arena, so they go before the shared frame.
  send_pending_images(*ch);
  auto frame = encode_stream_frame(*ch, payload, image);
  Delivery delivery{*ch, image, payload, frame};
  for (Entry& e : list) {
    if (e.image_seq == ch->seq) continue;
    e.outlet->send_delivery(delivery);
    ++stats_.deliveries;
  }
  return {};
}

void Router::send_pending_images(cache::Channel& ch) {
  for (Entry& e : entries(ch)) {
    if (e.image_seq != 0) continue;
    e.outlet->send_image(ch, 0);
    e.image_seq = ch.seq;
  }
}

std::span<const uint8_t> Router::encode_stream_frame(const cache::Channel& ch, std::span<const uint8_t> payload,
                                                     bool image) {
  size_t size = (image ? wire::kImageFixedSize : wire::kUpdateFixedSize) + payload.size();
  auto out = fanout_.reserve(size);
  size_t n = image ? wire::encode(out, wire::Image{ch.id, ch.seq, 0, payload})
                   : wire::encode(out, wire::Update{ch.id, ch.seq, payload});
  return fanout_.commit(n);
}

Outcome Router::snapshot(Outlet* outlet, std::string_view topic, uint32_t request_id) {
  if (auto e = topic::validate_topic(topic, limits_.topic); e != topic::Error::Ok) {
    return {wire::Code::InvalidTopic, topic::describe(e)};
  }
  cache::Channel* ch = channels_.find(topic);
  if (!ch || !ch->has_data()) return {wire::Code::NotFound, "no such topic in the cache"};
  outlet->send_image(*ch, request_id);
  return {};
}

}  // namespace tw::broker
