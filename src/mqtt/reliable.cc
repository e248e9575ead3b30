// QoS 1 and 2 to subscribers (4.3.2, 4.3.3, 4.4). A subscription granted
// QoS 1 or 2 gets each message as its own PUBLISH with a packet id: the
// version's shared QoS 0 encoding (encoded once per message, as for QoS 0
// subscribers) copied into the connection's in-flight window with the id
// inserted. The window holds at most the client's Receive Maximum
// messages; a full window, like an output queue over max_output_buffer, is
// a slow consumer, and the subscription's policy applies: conflate (the
// default) holds the channel and sends its latest value when a slot frees,
// drop discards and counts, disconnect closes with 0x97. Nothing waits for
// an acknowledgement upstream: a publisher never sees a slow subscriber.
#include "mqtt/mqtt_session.h"

namespace tw::mqtt {

uint8_t MqttSession::delivery_qos(const cache::Channel& channel) const {
  if (!reliable_) return 0;
  uint8_t qos = 0;
  for (const Subscription& s : subscriptions_) {
    if (s.qos > qos && applies(s, channel)) qos = s.qos;
  }
  return qos;
}

void MqttSession::send_reliable(const cache::Channel& channel, std::span<const uint8_t> qos0, uint8_t qos,
                                broker::SlowPolicy policy) {
  if (qos0.empty() || !fits(publish_with_id_max(qos0.size()))) return;
  const bool full = held_.contains(channel.id) || outbound_.full() || output_over_bound();
  if (!full) return output().queue_ref(outbound_.add(qos0, qos));  // the slot outlives the flush
  switch (policy) {
    case broker::SlowPolicy::Disconnect: return apply(session::DeliveryPolicy::Verdict::SlowConsumer);
    case broker::SlowPolicy::Drop: ++env().counters.dropped_messages; return;
    default: return hold(channel.id);
  }
}

void MqttSession::send_reliable_image(const cache::Channel& channel, uint8_t qos, broker::SlowPolicy policy) {
  const MqttEncoder& encoder = MqttEncoder::instance(version_);
  image_scratch_.resize(encoder.image_max(channel));
  image_scratch_.resize(encoder.encode_image(image_scratch_, channel, subscribing_));
  send_reliable(channel, image_scratch_, qos, policy);  // an empty image (a cleared channel) sends nothing
}

void MqttSession::hold(cache::ChannelId id) {
  if (!held_.insert(id).second) return;
  held_order_.push_back(id);
  ++env().counters.conflated_channels;
}

void MqttSession::release_held() {
  while (!held_order_.empty() && !outbound_.full() && !output_over_bound()) {
    const cache::ChannelId id = held_order_.front();
    held_order_.pop_front();
    held_.erase(id);
    const cache::Channel* channel = env().router.channel(id);
    // A channel no longer delivered here (unsubscribed, freed) is forgotten.
    if (channel == nullptr || !channel->has_data() || !env().router.delivers(this, id)) continue;
    const uint8_t qos = delivery_qos(*channel);
    if (qos == 0) continue;
    send_reliable_image(*channel, qos, broker::SlowPolicy::Conflate);
    ++env().counters.refresh_images;
  }
}

void MqttSession::handle_outbound_ack(const PubResponse& msg) {
  switch (outbound_.acknowledge(msg.type, msg.packet_id, msg.reason)) {
    case OutboundWindow::Ack::Done: return release_held();
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
  for (const OutboundMessage* m : outbound_.restore(std::move(messages))) {
    if (m->released) {
      send_pub_response(PacketType::Pubrel, m->packet_id, Reason::Success);
    } else {
      output().queue_ref(m->packet);  // with DUP [MQTT-3.3.1-1]
    }
  }
}

}  // namespace tw::mqtt
