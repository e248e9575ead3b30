// SUBSCRIBE/SUBACK and UNSUBSCRIBE/UNSUBACK (3.8 to 3.11), and what of the
// router's output reaches the client. A subscription is granted the QoS it
// asks for; QoS 0 messages are encoded once for every subscriber
// (encoder.h), QoS 1 and 2 ones go through the in-flight window (reliable.cc).
#include <algorithm>

#include "mqtt/encoder.h"
#include "mqtt/mqtt_session.h"

namespace tw::mqtt {

namespace {
constexpr uint8_t kFailureV311 = 0x80;
}  // namespace

void MqttSession::handle_subscribe(const Packet& packet) {
  Subscribe msg;
  if (auto f = decode_subscribe(packet, version_, msg); !f.ok()) return refuse(f.reason, f.text);
  for (const TopicFilter& t : msg.filters) {
    if (t.no_local && is_shared_filter(t.filter)) {
      return refuse(Reason::ProtocolError, "No Local on a shared subscription");  // [MQTT-3.8.3-4]
    }
  }
  // Every filter is checked before the SUBACK, and subscribed after it: the
  // retained images that a subscription sends follow its SUBACK.
  std::vector<uint8_t> codes(msg.filters.size());
  std::vector<Patterns> mapped(msg.filters.size());
  for (size_t i = 0; i < msg.filters.size(); ++i) {
    Reason r = check_filter(msg.filters[i].filter, mapped[i]);
    if (r == Reason::Success) r = static_cast<Reason>(msg.filters[i].qos);  // Granted QoS 0, 1 or 2
    codes[i] = version_ == Version::V311 && static_cast<uint8_t>(r) >= 0x80 ? kFailureV311 : static_cast<uint8_t>(r);
  }
  const size_t max = 8 + codes.size();
  queue_packet(max, [&](std::span<uint8_t> out) { return encode_suback(out, version_, msg.packet_id, codes); });
  if (queue_backed_) {
    std::vector<StoredSession::Subscription> after = stored_subscriptions();
    for (size_t i = 0; i < msg.filters.size(); ++i) {
      if (codes[i] < 0x80) after.push_back({std::string(msg.filters[i].filter), 0, msg.filters[i].qos});
    }
    update_queue(queue_patterns(after));
  }
  std::vector<std::string_view> granted;
  for (size_t i = 0; i < msg.filters.size(); ++i) {
    if (codes[i] >= 0x80) continue;
    add_subscription(msg.filters[i], mapped[i], msg.properties.subscription_id);
    for (size_t p = 0; p < mapped[i].count; ++p) granted.push_back(mapped[i].pattern[p]);
  }
  settle(granted);
  if (session_expiry_s_ != 0 && !granted.empty()) persist_session();
}

Reason MqttSession::check_filter(std::string_view filter, Patterns& mapped) {
  if (!is_valid_filter(filter)) return Reason::TopicFilterInvalid;
  if (is_shared_filter(filter)) {
    const size_t at = shared_filter_start(filter);
    if (at == 0) return Reason::TopicFilterInvalid;
    filter = filter.substr(at);
  }
  if (!map_filter(filter, {env().config.limits.max_topic_length, env().config.limits.max_topic_depth}, mapped)) {
    return Reason::TopicFilterInvalid;
  }
  // Each pattern the filter maps to is entitled on its own: "a/#" is "a/>"
  // and "a", and a user entitled to a/> only gets that part. None: refused.
  size_t kept = 0;
  for (size_t i = 0; i < mapped.count; ++i) {
    if (!permitted(Access::Subscribe, mapped.pattern[i])) continue;
    if (kept != i) mapped.pattern[kept] = std::move(mapped.pattern[i]);
    ++kept;
  }
  mapped.count = kept;
  if (kept == 0) {
    ++env().counters.entitlement_refusals;
    return Reason::NotAuthorized;
  }
  for (size_t i = 0; i < mapped.count; ++i) {
    if (pattern_refs_.contains(mapped.pattern[i])) continue;
    const broker::Outcome check = env().router.check_subscribe(this, mapped.pattern[i]);
    if (check.code == wire::Code::TooManySubscriptions) {
      ++env().counters.subscription_limit_hits;
      return Reason::QuotaExceeded;
    }
    if (!check.ok()) return Reason::TopicFilterInvalid;
  }
  return Reason::Success;
}

void MqttSession::add_subscription(const TopicFilter& t, const Patterns& patterns, uint32_t id) {
  const std::string_view filter = t.filter;
  // The same filter again replaces the subscription (3.8.4): its patterns are already there.
  for (Subscription& s : subscriptions_) {
    if (s.filter != filter) continue;
    s.qos = t.qos;
    s.retain_handling = t.retain_handling;
    s.id = id;
    s.no_local = t.no_local;
    s.retain_as_published = t.retain_as_published;
    update_rewrites();
    // Retain Handling 0 (and every MQTT 3.1.1 subscription): the retained
    // messages again [MQTT-3.8.4-3]; a shared subscription gets none (4.8.2).
    if (t.retain_handling == 0 && s.share == nullptr) {
      for (size_t i = 0; i < s.patterns.count; ++i) env().router.resend_images(this, s.patterns.pattern[i]);
    }
    return;
  }
  Subscription& s = subscriptions_.emplace_back(
      Subscription{std::string(filter), patterns, t.retain_handling, t.qos, id, t.no_local, t.retain_as_published});
  update_rewrites();
  if (is_shared_filter(filter)) {
    s.filter_at = shared_filter_start(filter);
    s.share = server_.groups.join(share_key(s));
    shared_ = true;
  }
  dollar_filters_ = dollar_filters_ || reaches_dollar_topics(s.own_filter());
  subscribing_ = true;  // the images the router sends now are the retained messages
  // Retain Handling 2 (MQTT 5): no retained messages for this subscription;
  // nor for a shared one, whose channels are spread over its group (4.8.2).
  skip_retained_ = t.retain_handling == 2 || s.share != nullptr;
  for (size_t i = 0; i < patterns.count; ++i) {
    if (pattern_refs_[patterns.pattern[i]]++ == 0) env().router.subscribe(this, patterns.pattern[i]);
  }
  subscribing_ = false;
  skip_retained_ = false;
}

void MqttSession::handle_unsubscribe(const Packet& packet) {
  Subscribe msg;
  if (auto f = decode_unsubscribe(packet, version_, msg); !f.ok()) return refuse(f.reason, f.text);
  std::vector<uint8_t> codes(msg.filters.size());
  for (size_t i = 0; i < msg.filters.size(); ++i) {
    codes[i] = static_cast<uint8_t>(remove_subscription(msg.filters[i].filter) ? Reason::Success
                                                                                : Reason::NoSubscriptionExisted);
  }
  const size_t max = 8 + codes.size();
  queue_packet(max, [&](std::span<uint8_t> out) { return encode_unsuback(out, version_, msg.packet_id, codes); });
  if (session_expiry_s_ != 0) persist_session();
}

bool MqttSession::remove_subscription(std::string_view filter) {
  auto it = std::find_if(subscriptions_.begin(), subscriptions_.end(),
                         [&](const Subscription& s) { return s.filter == filter; });
  if (it == subscriptions_.end()) return false;
  for (size_t i = 0; i < it->patterns.count; ++i) {
    const std::string& pattern = it->patterns.pattern[i];
    auto ref = pattern_refs_.find(pattern);
    if (ref != pattern_refs_.end() && --ref->second == 0) {
      env().router.unsubscribe(this, pattern);
      pattern_refs_.erase(ref);
    }
  }
  leave_group(*it);
  subscriptions_.erase(it);
  update_rewrites();
  shared_ = std::any_of(subscriptions_.begin(), subscriptions_.end(), [](const Subscription& s) { return s.share; });
  dollar_filters_ = std::any_of(subscriptions_.begin(), subscriptions_.end(),
                                [](const Subscription& s) { return reaches_dollar_topics(s.own_filter()); });
  return true;
}

// "GROUP/filter" names the group, the user's own (shared_groups.h).
std::string MqttSession::share_key(const Subscription& s) const {
  return SharedGroups::key(key_.user, std::string_view(s.filter).substr(7));
}

void MqttSession::leave_group(Subscription& s) {
  if (s.share == nullptr) return;
  server_.groups.leave(share_key(s), s.share);
  s.share = nullptr;
}

bool MqttSession::wants(const cache::Channel& channel) const {
  // The common case costs two comparisons: no shared subscription, no '$' topic.
  const bool dollar = channel.topic.starts_with('$');
  if (!shared_ && !dollar) return !draining();  // nothing follows a DISCONNECT [MQTT-3.14.4-1]
  if ((!shared_ && !dollar_filters_) || draining()) return false;
  return std::any_of(subscriptions_.begin(), subscriptions_.end(),
                     [&](const Subscription& s) { return applies(s, channel); });
}

bool MqttSession::applies(const Subscription& s, const cache::Channel& channel) {
  if (channel.topic.starts_with('$') && !reaches_dollar_topics(s.own_filter())) return false;
  if (s.share != nullptr && !s.share->owns(channel.topic)) return false;
  for (size_t i = 0; i < s.patterns.count; ++i) {
    if (topic::matches(s.patterns.pattern[i], channel.topic)) return true;
  }
  return false;
}

// [MQTT-3.1.2-24]: nothing larger than the client's Maximum Packet Size is sent; it is dropped.
bool MqttSession::fits(size_t packet_size) {
  if (client_max_packet_ == 0 || packet_size <= client_max_packet_) return true;
  ++oversize_dropped_;
  return false;
}

bool MqttSession::expires(const cache::Channel& channel) { return forwarded_deadline(channel.attributes) != 0; }

bool MqttSession::image_fits(const cache::Channel& channel) {
  return client_max_packet_ == 0 || fits(MqttEncoder::instance(version_).image_max(channel, subscribing_, resuming_));
}

bool MqttSession::own_echo(const cache::Channel& channel) const {
  if (!no_local_ || env().router.origin().outlet != this) return false;
  return std::none_of(subscriptions_.begin(), subscriptions_.end(),
                      [&](const Subscription& s) { return !s.no_local && applies(s, channel); });
}

bool MqttSession::keeps_retain(const cache::Channel& channel) const {
  if (!retain_as_published_ || !env().router.origin().retain) return false;
  return std::any_of(subscriptions_.begin(), subscriptions_.end(),
                     [&](const Subscription& s) { return s.retain_as_published && applies(s, channel); });
}

void MqttSession::send_image(const cache::Channel& channel, uint32_t request_id) {
  if ((subscribing_ && skip_retained_) || !wants(channel) || !image_fits(channel)) return;
  // A snapshot of its own (a packet id, a topic alias) goes like a stream's first image.
  if (const uint8_t qos = delivery_qos(channel); own_publish(qos)) {
    return send_stream_image_as(channel, broker::SlowPolicy::Conflate, {true, qos});
  }
  Session::send_image(channel, request_id);
}

void MqttSession::send_stream_image(const cache::Channel& channel, broker::SlowPolicy policy) {
  // A resumed session's catch-up: only the channels with a message it has not had (session_state.cc).
  if (subscribing_ && resuming_ && seen_already(channel)) return;
  note_seen(channel);
  // A live message (a channel's first, sent as its image): No Local and Retain As Published apply.
  if (!subscribing_ && own_echo(channel)) return;
  if ((!subscribing_ || resuming_) && from_queue(channel)) return;  // live or catch-up: its queue has it
  if (!subscribing_ && keeps_retain(channel)) return send_as_retained(channel, policy);
  if ((subscribing_ && skip_retained_) || !wants(channel) || !image_fits(channel)) return;
  const uint8_t qos = delivery_qos(channel);
  send_stream_image_as(channel, policy, {own_publish(qos), qos});
}

// A tiered broker's image of state that predates the subscription, arriving
// after SUBSCRIBE was handled: a retained message, as the images sent during
// it, and under the same rule: none for a subscription with Retain Handling
// 2 nor a shared one (add_subscription), which must be every subscription
// that covers the channel, since the image no longer says which one asked.
void MqttSession::send_prior_image(const cache::Channel& channel, broker::SlowPolicy policy) {
  const bool wanted = std::any_of(subscriptions_.begin(), subscriptions_.end(), [&](const Subscription& s) {
    return s.retain_handling != 2 && s.share == nullptr && applies(s, channel);
  });
  if (wanted) send_as_retained(channel, policy);
}

// Also a live message that keeps its RETAIN 1 (Retain As Published).
void MqttSession::send_as_retained(const cache::Channel& channel, broker::SlowPolicy policy) {
  const bool was = subscribing_;
  subscribing_ = true;  // the session's encoder marks what it encodes now retained
  send_stream_image(channel, policy);
  subscribing_ = was;
}

void MqttSession::send_delivery(const broker::Delivery& delivery) {
  note_seen(delivery.channel);
  if (!wants(delivery.channel) || own_echo(delivery.channel) || from_queue(delivery.channel)) return;
  // Only an opaque channel's messages can carry RETAIN (MQTT publishes), and
  // such a message is the channel's image: sent as a retained image.
  if (keeps_retain(delivery.channel)) return send_as_retained(delivery.channel, delivery.policy);
  // A message that waited its whole Message Expiry Interval in the broker
  // (a congested link) encodes to nothing: it is not sent [MQTT-3.3.2-5].
  if (expires(delivery.channel) && delivery.frames.get(MqttEncoder::instance(version_)).empty()) return;
  if (const uint8_t qos = delivery_qos(delivery.channel); own_publish(qos)) {
    return send_delivery_as(delivery, {true, qos});
  }
  if (client_max_packet_ != 0 && !fits(delivery.frames.get(MqttEncoder::instance(version_)).size())) return;
  Session::send_delivery(delivery);
}

}  // namespace tw::mqtt
