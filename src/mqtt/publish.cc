// PUBLISH in and the QoS handshakes (3.3 to 3.7). Every PUBLISH goes into
// an opaque channel of the same topic at once (the last-value cache is the
// retained store), whatever its QoS: QoS 1 is acknowledged after, QoS 2 is
// published on receipt and its packet id kept until PUBREL (4.3.3, method
// A), so a resent PUBLISH with that id is not published twice.
//
// With a store (`store.dir`) a QoS 1 or 2 PUBLISH also goes to the store
// thread (queue::Spool), which appends it to every durable queue whose
// subscriptions match its topic; its PUBACK or PUBREC is sent only when the
// store answers, after the append is durable (fdatasync), as a native
// guaranteed publish's PUBLISH_ACK is. Live subscribers get it at once, as
// without a store. A refusal (a full queue, a full disk): MQTT 5 is told with
// its reason (0x97 Quota exceeded, 0x80 for another store error); a 3.1.1
// client, whose PUBACK has no reason, is disconnected instead, so that it
// sends the message again when it comes back (docs/mqtt.md, "QoS 1 and 2
// publishers and the store").
#include <algorithm>

#include "base/clock.h"
#include "base/log.h"
#include "mqtt/mqtt_session.h"
#include "mqtt/reader.h"
#include "mqtt/session_file.h"
#include "queue/spool.h"
#include "tickwire/wire/codec.h"
#include "tickwire/wire/guaranteed.h"

namespace tw::mqtt {

namespace {
Reason reason_for(const broker::Outcome& outcome) {
  switch (outcome.code) {
    case wire::Code::InvalidTopic: return Reason::TopicNameInvalid;
    case wire::Code::KindMismatch:
    case wire::Code::BadPayload: return Reason::PayloadFormatInvalid;
    case wire::Code::TooManyChannels:
    case wire::Code::ChannelQuota: return Reason::QuotaExceeded;
    default: return Reason::ImplementationSpecificError;
  }
}
}  // namespace

// MQTT clients expect one broker's order: a SUBSCRIBE the broker read before
// a PUBLISH applies to it, whichever connections carried them. A tiered
// broker keeps it with its PublishFence (session/publish_fence.h): the
// PUBLISH waits, its connection unread, until the subscriptions that other
// access points had sent on are in effect at the channels' owners (one ring
// round trip; the loop polls meanwhile). A client's own SUBSCRIBE needs no
// wait: it went the same way before the PUBLISH.
bool MqttSession::may_publish_now() {
  const session::PublishFence* fence = env().publish_fence;
  if (fence == nullptr) return true;
  if (fence_passed_) {
    fence_passed_ = false;
    return true;
  }
  if (fence->clear(fence_ticket_)) return true;
  fenced_ = true;
  ++env().loop.fenced;
  begin_paced();
  return false;
}

bool MqttSession::can_pace() const { return !fenced_ || env().publish_fence->reached(fence_ticket_); }

void MqttSession::pace() {
  if (!fenced_ || !env().publish_fence->reached(fence_ticket_)) return;
  leave_fence();
  fence_passed_ = true;
  end_paced();  // parses the PUBLISH that waited, and what came behind it
}

void MqttSession::leave_fence() {
  if (!fenced_) return;
  fenced_ = false;
  --env().loop.fenced;
}

void MqttSession::handle_publish(const Packet& packet) {
  Publish msg;
  if (auto f = decode_publish(packet, version_, msg); !f.ok()) return refuse(f.reason, f.text);
  std::string_view topic;
  if (!resolve_topic(msg, topic)) return;
  topic = broker_topic(topic, topic_scratch_);  // empty MQTT levels (topic_map.h); "" (refused) if it cannot be
  const bool resent = msg.qos == 2 && std::find(awaiting_pubrel_.begin(), awaiting_pubrel_.end(), msg.packet_id) !=
                                          awaiting_pubrel_.end();
  if (resent) {
    if (std::find(storing_.begin(), storing_.end(), msg.packet_id) != storing_.end()) return;  // the store answers
    return send_pub_response(PacketType::Pubrec, msg.packet_id, Reason::Success);
  }
  if (msg.qos == 2 && awaiting_pubrel_.size() >= kReceiveMaximum) {
    return refuse_draining(Reason::ReceiveMaximumExceeded, "more QoS 2 messages awaiting PUBREL than Receive Maximum");
  }
  Reason reason = Reason::Success;
  if (msg.properties.payload_format == 1 && !valid_utf8(msg.payload)) {
    reason = Reason::PayloadFormatInvalid;  // 3.3.2.3.2: the server may check it
  } else {
    // With a store a QoS 1 or 2 message is marked as stored (codec.h): stored sessions get it from their queues.
    const uint8_t stored = msg.qos > 0 && env().spool != nullptr ? kForwardedStored : 0;
    reason = publish_to_channel(topic, msg.payload, msg.retain, forwarded_properties(msg.properties, msg.qos | stored));
  }
  if (reason != Reason::Success && !publish_refused_logged_) {
    publish_refused_logged_ = true;
    TW_WARN("session %.*s: PUBLISH to '%.*s' refused: %s (further ones are not logged)",
            static_cast<int>(name().size()), name().data(), static_cast<int>(topic.size()), topic.data(),
            reason_name(reason));
  }
  if (msg.qos > 0 && reason == Reason::Success && env().spool != nullptr) return store_publish(topic, msg, forwarded_);
  if (msg.qos == 1) return send_pub_response(PacketType::Puback, msg.packet_id, reason);
  if (msg.qos == 2) {
    if (reason == Reason::Success) awaiting_pubrel_.push_back(msg.packet_id);
    send_pub_response(PacketType::Pubrec, msg.packet_id, reason);
  }
}

bool MqttSession::resolve_topic(const Publish& msg, std::string_view& topic) {
  const uint16_t alias = msg.properties.topic_alias;
  if (alias == 0) {
    topic = msg.topic;
    return true;
  }
  if (alias > kTopicAliasMaximum) {
    refuse_draining(Reason::TopicAliasInvalid, "topic alias above the Topic Alias Maximum");  // [MQTT-3.3.2-9]
    return false;
  }
  if (topic_aliases_.empty()) topic_aliases_.resize(kTopicAliasMaximum + 1);
  std::string& known = topic_aliases_[alias];
  if (!msg.topic.empty()) {
    known.assign(msg.topic);
  } else if (known.empty()) {
    refuse_draining(Reason::ProtocolError, "topic alias that was never set");
    return false;
  }
  topic = known;
  return true;
}

// What of the PUBLISH's properties travels on with the message (codec.h),
// and the QoS it came with, built in a buffer the connection keeps: no
// allocation per message once the largest was seen. Empty for a QoS 2
// PUBLISH without properties (3.1.1 ones never have any).
std::span<const uint8_t> MqttSession::forwarded_properties(const Properties& properties, uint8_t qos) {
  static const Properties none;
  const Properties& kept = version_ == Version::V5 ? properties : none;
  if (forwards_nothing(kept, qos)) return {};  // 2 | kForwardedStored keeps its head
  forwarded_.resize(forwarded_max(kept));
  // The clock is read only for an expiry.
  forwarded_.resize(encode_forwarded(forwarded_, kept, kept.message_expiry != 0 ? monotonic_ns() : 0, qos));
  return forwarded_;
}

Reason MqttSession::publish_to_channel(std::string_view topic, std::span<const uint8_t> payload, bool retain,
                                       std::span<const uint8_t> properties) {
  if (!permitted(Access::Publish, topic)) return Reason::NotAuthorized;
  // Delivered native frames are longer than the payload: keep them within max_frame.
  if (payload.size() + wire::kImageFixedSize + topic.size() > env().config.limits.max_frame) {
    return Reason::PacketTooLarge;
  }
  cache::ChannelId id = 0;
  if (auto it = channels_.find(topic); it != channels_.end()) {
    id = it->second;
  } else {
    // The connection holds the channel while it lives (a channel with no
    // publisher, provider or subscriber is freed after channel_linger_ms, and
    // the id cached below must stay valid), under its quotas, as a native REGISTER.
    broker::Outcome outcome = advertise(topic, wire::PayloadKind::Opaque, id);
    if (!outcome.ok()) return reason_for(outcome);
    // A cache of lookups, bounded like a native connection's registrations.
    if (channels_.size() >= env().config.limits.max_registrations) channels_.clear();
    channels_.emplace(std::string(topic), id);
  }
  // Its origin, for No Local and Retain As Published: the token crosses the
  // tiers only when this client must recognise its own messages; and its
  // properties, for MQTT 5 subscribers and the retained message.
  const broker::MessageOrigin origin{this, no_local_ ? token : 0, 0, retain, !retain, properties};
  broker::Outcome outcome = env().router.publish(id, payload, /*image=*/true, fields::Checked::No, origin);
  return outcome.ok() ? Reason::Success : reason_for(outcome);
}

void MqttSession::handle_pub_response(const Packet& packet) {
  PubResponse msg;
  if (auto f = decode_pub_response(packet, version_, msg); !f.ok()) return refuse(f.reason, f.text);
  // PUBACK, PUBREC and PUBCOMP answer what the broker sent (reliable.cc).
  if (msg.type != PacketType::Pubrel) return handle_outbound_ack(msg);
  auto it = std::find(awaiting_pubrel_.begin(), awaiting_pubrel_.end(), msg.packet_id);
  const bool known = it != awaiting_pubrel_.end();
  if (known) awaiting_pubrel_.erase(it);
  send_pub_response(PacketType::Pubcomp, msg.packet_id, known ? Reason::Success : Reason::PacketIdentifierNotFound);
}

const std::shared_ptr<queue::Port>& MqttSession::port() {
  if (!port_) port_ = std::make_shared<queue::Port>(queue::Port{env().mailbox, this});
  return port_;
}

// The message id the store answers with: the QoS above the packet id.
void MqttSession::store_publish(std::string_view topic, const Publish& msg, std::span<const uint8_t> forwarded) {
  if (msg.qos == 2) {
    awaiting_pubrel_.push_back(msg.packet_id);  // a resend is not published again
    storing_.push_back(msg.packet_id);
  }
  // For the stored sessions' queues: the expiry on the wall clock (it outlives the process), the properties as forwarded.
  const uint64_t deadline = forwarded_deadline(forwarded);
  const uint64_t expires_at = deadline == 0 ? 0 : realtime_ns() + (deadline - std::min(deadline, monotonic_ns()));
  const auto properties = forwarded.size() > kForwardedHead ? forwarded.subspan(kForwardedHead) : std::span<const uint8_t>{};
  env().spool->publish_mqtt(port(), uint64_t{msg.qos} << 16 | msg.packet_id, std::string(topic),
                            encode_queued_header(msg.qos, expires_at, properties),
                            std::vector<uint8_t>(msg.payload.begin(), msg.payload.end()), msg.dup);
  // Flow control, as for native guaranteed publishes: past the window the connection is not read.
  if (++unanswered_ >= env().config.store.publish_window) {
    window_full_ = true;
    pause_input(true);
  }
}

void MqttSession::on_store_frames(std::span<const uint8_t> frames, uint32_t answered) {
  while (!frames.empty() && !closing()) {
    wire::Frame frame;
    if (wire::split_frame(frames, UINT32_MAX, frame) != wire::SplitResult::Frame) break;
    const auto bytes = frames.first(frame.size);
    frames = frames.subspan(frame.size);
    wire::PublishAck ack;
    if (frame.type == wire::MsgType::PublishAck && wire::decode(frame, ack)) {
      answer_stored(ack.message_id, ack.code, ack.text);
    } else if (frame.type == wire::MsgType::Deliver) {
      // The session's queue (queued.cc): in order, behind those that wait for room.
      if (!queued_waiting_.empty() || !send_queued(bytes)) queued_waiting_.emplace_back(bytes.begin(), bytes.end());
    }
  }
  unanswered_ -= std::min(unanswered_, answered);
  if (window_full_ && unanswered_ < env().config.store.publish_window && !closing()) {
    window_full_ = false;
    resume_input();
  }
}

void MqttSession::answer_stored(uint64_t message_id, wire::Code code, std::string_view text) {
  const auto packet_id = static_cast<uint16_t>(message_id);
  const bool qos2 = (message_id >> 16) == 2;
  if (qos2) std::erase(storing_, packet_id);
  if (code != wire::Code::Ok) {
    if (qos2) std::erase(awaiting_pubrel_, packet_id);  // a PUBREC with a refusal ends the exchange
    TW_WARN("session %s: PUBLISH not stored: %.*s", peer().c_str(), static_cast<int>(text.size()), text.data());
    if (version_ == Version::V311) return fail(wire::Code::Ok, "PUBLISH not stored: 3.1.1 cannot say so in its PUBACK");
  }
  const Reason reason = code == wire::Code::Ok                                             ? Reason::Success
                        : code == wire::Code::QueueFull || code == wire::Code::DiskFull ? Reason::QuotaExceeded
                                                                                         : Reason::UnspecifiedError;
  send_pub_response(qos2 ? PacketType::Pubrec : PacketType::Puback, packet_id, reason);
}

void MqttSession::send_pub_response(PacketType type, uint16_t packet_id, Reason reason) {
  // MQTT 3.1.1 acknowledgements carry no reason: a refused message is acknowledged
  // all the same ([MQTT-3.3.5-2] allows it), and the refusal is logged.
  const PubResponse response{type, packet_id, reason};
  queue_packet(5, [&](std::span<uint8_t> out) { return encode_pub_response(out, version_, response); });
}

}  // namespace tw::mqtt
