// PUBLISHes of a client's own (4.3.2, 4.3.3, 4.4, 3.3.2.3.4, 3.3.2.3.8).
// QoS 0 messages to a client that uses neither subscription identifiers nor
// topic aliases share one encoding per version (encoder.h). Everything else
// is that shared encoding rewritten for the client (codec.h,
// rewrite_publish): a subscription granted QoS 1 or 2 gets each message with
// a packet id, copied into the connection's in-flight window (outbound.h);
// an MQTT 5 client gets the identifiers of the subscriptions that deliver
// it, and a topic alias the broker assigns on a topic's first message and
// uses alone (empty topic) after.
//
// These are the delivery policy's own copies (session/delivery_policy.h):
// the policy decides what is sent and when, this file writes it. The window
// holds at most the client's Receive Maximum messages. A full window, like
// an output queue over max_output_buffer, is a slow consumer, and the
// subscription's policy applies: conflate (the default) holds the channel
// and sends its latest value when a slot frees, drop discards and counts,
// disconnect closes with 0x97. Nothing waits for an acknowledgement
// upstream: a publisher never sees a slow subscriber.
#include <algorithm>

#include "base/clock.h"
#include "mqtt/mqtt_session.h"

namespace tw::mqtt {

uint8_t MqttSession::delivery_qos(const cache::Channel& channel) const {
  if (!reliable_) return 0;
  uint8_t qos = 0;
  for (const Subscription& s : subscriptions_) {
    if (s.qos > qos && applies(s, channel)) qos = s.qos;
  }
  // [MQTT-3.8.4-8]: no more than the message was published with (a native one: any).
  const bool retained = subscribing_ && !resuming_;  // the retained message, as the encoder picks it
  return std::min(qos, forwarded_qos(retained ? channel.retained_attributes() : channel.attributes));
}

std::span<const uint32_t> MqttSession::subscription_ids(const cache::Channel& channel) {
  ids_scratch_.clear();
  for (const Subscription& s : subscriptions_) {
    if (s.id != 0 && applies(s, channel)) ids_scratch_.push_back(s.id);
  }
  return ids_scratch_;
}

bool MqttSession::outbound_alias(std::string_view topic, PublishRewrite& r) {
  if (auto it = outbound_aliases_.find(topic); it != outbound_aliases_.end()) {
    r.topic_alias = it->second;
    r.topic_elided = true;
    return true;
  }
  if (outbound_aliases_.size() >= outbound_alias_max_) return false;  // the rest go with their topic
  r.topic_alias = static_cast<uint16_t>(outbound_aliases_.size() + 1);
  outbound_aliases_.emplace(std::string(topic), r.topic_alias);
  return true;
}

session::Copy MqttSession::copy_of(const cache::Channel& channel) {
  const uint8_t qos = delivery_qos(channel);
  return {own_publish(qos), qos};
}

void MqttSession::send_copy(const cache::Channel& channel, std::span<const uint8_t> qos0, session::Copy copy) {
  if (qos0.empty()) return;
  PublishRewrite r;
  r.qos = copy.level;
  if (version_ == Version::V5) r.subscription_ids = subscription_ids(channel);
  if (!fits(rewritten_publish_max(qos0.size(), r))) return;
  if (r.qos > 0) {  // the slot outlives the flush; an expiry goes with it, for a resend
    const auto kept = outbound_.add(qos0, version_, r, forwarded_deadline(channel.attributes));
    // The window keeps the topic: a message resent after a reconnect, where
    // aliases start again, carries it [MQTT-3.3.2-7]. This connection is
    // sent a copy that may use an alias instead (r has the packet id now).
    if (kept.empty() || outbound_alias_max_ == 0 || !outbound_alias(channel.topic, r)) {
      return output().queue_ref(kept);
    }
    return queue_rewritten(qos0, r);
  }
  if (outbound_alias_max_ != 0) outbound_alias(channel.topic, r);
  queue_rewritten(qos0, r);
}

void MqttSession::queue_rewritten(std::span<const uint8_t> qos0, const PublishRewrite& r) {
  rewrite_scratch_.resize(rewritten_publish_max(qos0.size(), r));
  rewrite_scratch_.resize(rewrite_publish(rewrite_scratch_, qos0, version_, r));
  output().queue(rewrite_scratch_.size(), [&](std::span<uint8_t> out) {
    std::copy(rewrite_scratch_.begin(), rewrite_scratch_.end(), out.begin());
    return rewrite_scratch_.size();
  });
}

void MqttSession::send_copy_image(const cache::Channel& channel, session::Copy copy) {
  if (!wants(channel)) return;  // a held channel this connection stopped taking (a shared group changed)
  const MqttEncoder& encoder = MqttEncoder::instance(version_);
  image_scratch_.resize(encoder.image_max(channel, subscribing_, resuming_));
  image_scratch_.resize(encoder.encode_image(image_scratch_, channel, subscribing_, resuming_));
  send_copy(channel, image_scratch_, copy);  // an empty image (a cleared channel) sends nothing
}

void MqttSession::update_rewrites() {
  reliable_ = std::any_of(subscriptions_.begin(), subscriptions_.end(), [](const Subscription& s) { return s.qos; });
  rewrites_ = outbound_alias_max_ != 0 ||
              std::any_of(subscriptions_.begin(), subscriptions_.end(), [](const Subscription& s) { return s.id; });
  no_local_ = std::any_of(subscriptions_.begin(), subscriptions_.end(), [](const Subscription& s) { return s.no_local; });
  retain_as_published_ = std::any_of(subscriptions_.begin(), subscriptions_.end(),
                                     [](const Subscription& s) { return s.retain_as_published; });
}

void MqttSession::handle_outbound_ack(const PubResponse& msg) {
  const OutboundWindow::Ack ack = outbound_.acknowledge(msg.type, msg.packet_id, msg.reason);
  // A queued message leaves its queue at PUBACK, or at PUBREC: the client holds it then (4.3.3).
  if (ack == OutboundWindow::Ack::Done || ack == OutboundWindow::Ack::SendPubrel) queued_acknowledged(msg.packet_id);
  switch (ack) {
    case OutboundWindow::Ack::Done:
      send_waiting_queued();
      return window_freed();
    case OutboundWindow::Ack::SendPubrel: return send_pub_response(PacketType::Pubrel, msg.packet_id, Reason::Success);
    case OutboundWindow::Ack::Unknown:
      // 4.3.3: a PUBREC for an id not in flight is answered, the others ignored.
      if (msg.type == PacketType::Pubrec) {
        send_pub_response(PacketType::Pubrel, msg.packet_id, Reason::PacketIdentifierNotFound);
      }
      return;
    case OutboundWindow::Ack::Mismatch:
      return refuse(Reason::ProtocolError, "acknowledgement that does not match the message's QoS");
  }
}

void MqttSession::redeliver(std::vector<OutboundMessage> messages) {
  for (const OutboundMessage* m : outbound_.restore(std::move(messages), monotonic_ns())) {
    if (m->released) {
      send_pub_response(PacketType::Pubrel, m->packet_id, Reason::Success);
    } else {
      output().queue_ref(m->packet);  // with DUP [MQTT-3.3.1-1]
    }
  }
}

}  // namespace tw::mqtt
