// The MQTT 3.1.1 and 5.0 wire codec: cuts packets from a byte stream,
// decodes what a client sends with the specifications' strict validation
// (remaining length, reserved flags, UTF-8, QoS, properties), and encodes
// what the broker sends. Hand-written: the protocol is the product's core,
// and the encoders write straight into caller memory (a turn's arena) with
// no allocation. Decoders allocate only SUBSCRIBE's filter list.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "mqtt/packet.h"

namespace tw::mqtt {

enum class Split { Ok, NeedMore, Malformed, TooLarge };
// Cuts the packet at the front of `in`. TooLarge: its size is above
// max_size, known from the fixed header before the body arrives.
Split split_packet(std::span<const uint8_t> in, size_t max_size, Packet& out);

// Why a packet was refused: the MQTT 5 reason and a sentence for the log.
struct Fault {
  Reason reason = Reason::Success;
  const char* text = "";
  bool ok() const { return reason == Reason::Success; }
};

// CONNECT fixes the version: UnsupportedProtocolVersion for a level other
// than 4 (3.1.1) or 5, with out.version left at V311 for the reply's format.
Fault decode_connect(const Packet& p, Connect& out);
Fault decode_publish(const Packet& p, Version v, Publish& out);
Fault decode_pub_response(const Packet& p, Version v, PubResponse& out);
Fault decode_subscribe(const Packet& p, Version v, Subscribe& out);
Fault decode_unsubscribe(const Packet& p, Version v, Subscribe& out);
Fault decode_disconnect(const Packet& p, Version v, Disconnect& out);
// PINGREQ: no flags, no body.
Fault decode_pingreq(const Packet& p);
// A topic filter's syntax (4.7.1): '#' alone in the last level, '+' alone in its level.
bool is_valid_filter(std::string_view filter);

// Which packet a property block belongs to: each property is allowed in some.
enum class PropertyContext : uint8_t { Connect, Will, Publish, PubResponse, Subscribe, Unsubscribe, Disconnect };
// Decodes a property block (length prefix included) from `r` into `out`.
void read_properties(class Reader& r, PropertyContext context, Properties& out);

// ---- encoders: each returns the bytes written, 0 when `out` is too small.

struct Connack {
  bool session_present = false;
  Reason reason = Reason::Success;
  // MQTT 5 properties the broker states (0 / empty: not sent).
  std::string_view assigned_client_id;
  uint16_t receive_maximum = 0;
  uint32_t maximum_packet_size = 0;
  uint16_t topic_alias_maximum = 0;
  uint16_t server_keep_alive = 0;  // the keep-alive the client must use instead of its own
  bool retain_available = true;
  bool shared_subscriptions = false;
  bool subscription_ids = false;
  std::string_view reason_string;
};
size_t encode_connack(std::span<uint8_t> out, Version v, const Connack& c);

// ---- the properties a PUBLISH carries on to its subscribers (docs/mqtt.md,
// "Message properties"). They travel beside the message through the broker
// as one byte string that only this codec reads (broker::MessageOrigin, the
// tier link's records, the channel's last value), the "forwarded" string:
//
//   [u64 Message Expiry deadline: monotonic ns, host order; 0 = none]
//   [u8 the QoS it was published with: a subscriber gets at most that one
//    [MQTT-3.8.4-8]]
//   [the received block's Payload Format Indicator, Content Type, Response
//    Topic, Correlation Data and User Properties, in the order received,
//    each as on the wire (id, value); no length prefix]
//
// Topic Alias is the publisher's own and is dropped (as is a Will's Will
// Delay Interval: a Will's properties travel the same way); the Message Expiry
// Interval is written anew on the way out, less the whole seconds the
// message waited [MQTT-3.3.2-6]. Empty: the message has none of them and
// no QoS below 2 (a native message, or an MQTT one at QoS 2), so that
// messages that need nothing carry nothing.
inline constexpr size_t kForwardedHead = 9;
// True when a PUBLISH with these properties and QoS forwards nothing (the empty string above).
inline bool forwards_nothing(const Properties& p, uint8_t qos) { return p.raw.empty() && qos == 2; }
// The largest forwarded string of a decoded PUBLISH's properties.
size_t forwarded_max(const Properties& p);
// Writes it into `out` (forwarded_max bytes): its size, 0 when it has nothing.
// An expiry of 0 is none (as mosquitto 2.0 reads it): the message never expires.
// `qos`: the QoS the PUBLISH came with.
size_t encode_forwarded(std::span<uint8_t> out, const Properties& p, uint64_t now_ns, uint8_t qos = 2);
// The most QoS a subscriber may get the message with: the QoS it was
// published with, 2 for one with no forwarded string (a native message).
inline uint8_t forwarded_qos(std::span<const uint8_t> forwarded) {
  return forwarded.size() < kForwardedHead ? 2 : forwarded[kForwardedHead - 1] & 0x03;
}
// Above the QoS in that byte: the message went to the store too (a QoS 1 or
// 2 PUBLISH with `store.dir`), so a stored session gets it from its queue,
// not live (docs/mqtt.md, "Sessions"). Such a string always has its head.
inline constexpr uint8_t kForwardedStored = 0x80;
inline bool forwarded_stored(std::span<const uint8_t> forwarded) {
  return forwarded.size() >= kForwardedHead && (forwarded[kForwardedHead - 1] & kForwardedStored) != 0;
}
// Its Message Expiry deadline (monotonic ns); 0 = none.
uint64_t forwarded_deadline(std::span<const uint8_t> forwarded);
// Whether its Message Expiry Interval has passed at now_ns.
inline bool forwarded_expired(std::span<const uint8_t> forwarded, uint64_t now_ns) {
  const uint64_t deadline = forwarded_deadline(forwarded);
  return deadline != 0 && now_ns >= deadline;
}
// The Message Expiry Interval to send at now_ns: the received one less the
// whole seconds waited, i.e. the seconds left rounded up (0: expired).
uint32_t expiry_left_s(uint64_t deadline_ns, uint64_t now_ns);

// PUBLISH up to its payload, which the caller writes right after (so an
// image is encoded straight into place): topic (the broker's: empty MQTT
// levels are written back, topic_map.h), QoS, retain, the packet id
// and (MQTT 5) the message's forwarded properties, with its Message Expiry
// Interval first as of now_ns. 0 when `out` is too small, or (MQTT 5) when
// the message has expired at now_ns (it must not be sent, [MQTT-3.3.2-5];
// 3.1.1 ignores the properties: its caller checks the expiry itself).
size_t publish_header_size(Version v, std::string_view topic, uint8_t qos, size_t payload_size,
                           std::span<const uint8_t> forwarded = {});
size_t encode_publish_header(std::span<uint8_t> out, Version v, std::string_view topic, uint8_t qos, bool retain,
                             uint16_t packet_id, size_t payload_size, std::span<const uint8_t> forwarded = {},
                             uint64_t now_ns = 0);
// Where the 4-byte value of an encoded PUBLISH's Message Expiry Interval is,
// when the broker wrote one (MQTT 5, its first property), so that a resend
// can carry what is left of it; 0 when it has none.
size_t message_expiry_at(std::span<const uint8_t> publish, Version v);
// The topic of an encoded PUBLISH that carries one (not elided for an
// alias); empty when `publish` is not such a packet. The same in 3.1.1 and 5.
std::string_view publish_topic(std::span<const uint8_t> publish);
// What one subscriber's PUBLISH adds to the shared QoS 0 encoding: its QoS
// and packet id, and (MQTT 5) a topic alias and its subscription identifiers.
struct PublishRewrite {
  uint8_t qos = 0;
  uint16_t packet_id = 0;
  uint16_t topic_alias = 0;     // 0: none
  bool topic_elided = false;    // the client knows the alias: the topic is left out
  std::span<const uint32_t> subscription_ids;
};
// The shared QoS 0 form of a PUBLISH (`qos0`, as encode_publish_header and
// a payload make it) rewritten for one subscriber: the fixed header, topic,
// packet id and properties are written anew (the message's own properties
// first, as they were, then the alias and identifiers), the payload copied.
// 0 when `out` is too small or `qos0` is not such a packet of version `v`.
size_t rewrite_publish(std::span<uint8_t> out, std::span<const uint8_t> qos0, Version v, const PublishRewrite& r);
// Its largest size.
size_t rewritten_publish_max(size_t qos0_size, const PublishRewrite& r);
// The DUP flag (3.3.1.1) of an encoded PUBLISH, set for a redelivery.
inline void mark_dup(std::span<uint8_t> publish) {
  if (!publish.empty()) publish[0] |= 0x08;
}
size_t encode_pub_response(std::span<uint8_t> out, Version v, const PubResponse& r);
// SUBACK / UNSUBACK with one reason code per filter (UNSUBACK of 3.1.1 has none).
size_t encode_suback(std::span<uint8_t> out, Version v, uint16_t packet_id, std::span<const uint8_t> codes);
size_t encode_unsuback(std::span<uint8_t> out, Version v, uint16_t packet_id, std::span<const uint8_t> codes);
size_t encode_pingresp(std::span<uint8_t> out);
// MQTT 5 only (3.1.1 has no server DISCONNECT): 0 for V311.
size_t encode_disconnect(std::span<uint8_t> out, Version v, Reason reason, std::string_view reason_string);

// Bytes a Variable Byte Integer of this value takes (1..4).
size_t varint_size(uint32_t value);
constexpr uint32_t kMaxRemainingLength = 268'435'455;  // 0xFF 0xFF 0xFF 0x7F

}  // namespace tw::mqtt
