// Encoding what the broker sends, straight into caller memory.
#include <cstring>

#include "mqtt/codec.h"
#include "mqtt/reader.h"
#include "mqtt/topic_map.h"

namespace tw::mqtt {
namespace {

// Big-endian writes into a fixed span; overflow() once anything did not fit.
class Writer {
 public:
  explicit Writer(std::span<uint8_t> out) : out_(out) {}
  void u8(uint8_t v) { put(&v, 1); }
  void u16(uint16_t v) {
    uint8_t b[2] = {static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
    put(b, 2);
  }
  void u32(uint32_t v) {
    uint8_t b[4] = {static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 8),
                    static_cast<uint8_t>(v)};
    put(b, 4);
  }
  void varint(uint32_t v) {
    do {
      uint8_t b = v & 0x7F;
      v >>= 7;
      u8(v ? b | 0x80 : b);
    } while (v);
  }
  void utf8(std::string_view s) {
    u16(static_cast<uint16_t>(s.size()));
    put(s.data(), s.size());
  }
  void bytes(std::span<const uint8_t> b) { put(b.data(), b.size()); }
  size_t size() const { return overflow_ ? 0 : len_; }

 private:
  void put(const void* p, size_t n) {
    if (overflow_ || n > out_.size() - len_) {
      overflow_ = true;
      return;
    }
    if (n) std::memcpy(out_.data() + len_, p, n);
    len_ += n;
  }
  std::span<uint8_t> out_;
  size_t len_ = 0;
  bool overflow_ = false;
};

uint8_t header(PacketType type, uint8_t flags = 0) {
  return static_cast<uint8_t>(static_cast<uint8_t>(type) << 4 | flags);
}

// A property's size: id byte + value.
size_t str_prop(std::string_view s) { return s.empty() ? 0 : 1 + 2 + s.size(); }

size_t connack_props_size(const Connack& c) {
  size_t n = str_prop(c.assigned_client_id) + str_prop(c.reason_string);
  if (c.receive_maximum) n += 3;
  if (c.maximum_packet_size) n += 5;
  if (c.topic_alias_maximum) n += 3;
  if (c.server_keep_alive) n += 3;
  n += 2 + 2 + 2 + 2;  // Retain, Wildcard, Subscription Identifiers and Shared Subscriptions Available
  return n;
}

void connack_props(Writer& w, const Connack& c) {
  if (!c.assigned_client_id.empty()) w.u8(0x12), w.utf8(c.assigned_client_id);
  if (c.receive_maximum) w.u8(0x21), w.u16(c.receive_maximum);
  if (c.maximum_packet_size) w.u8(0x27), w.u32(c.maximum_packet_size);
  if (c.topic_alias_maximum) w.u8(0x22), w.u16(c.topic_alias_maximum);
  if (c.server_keep_alive) w.u8(0x13), w.u16(c.server_keep_alive);
  w.u8(0x25), w.u8(c.retain_available);
  w.u8(0x28), w.u8(1);
  w.u8(0x29), w.u8(c.subscription_ids);
  w.u8(0x2A), w.u8(c.shared_subscriptions);
  if (!c.reason_string.empty()) w.u8(0x1F), w.utf8(c.reason_string);
}

}  // namespace

size_t varint_size(uint32_t v) { return v < 128 ? 1 : v < 16384 ? 2 : v < 2097152 ? 3 : 4; }

const char* reason_name(Reason r) {
  switch (r) {
    case Reason::Success: return "success";
    case Reason::MalformedPacket: return "malformed packet";
    case Reason::ProtocolError: return "protocol error";
    case Reason::UnsupportedProtocolVersion: return "unsupported protocol version";
    case Reason::ClientIdentifierNotValid: return "client identifier not valid";
    case Reason::NotAuthorized: return "not authorized";
    case Reason::ServerShuttingDown: return "server shutting down";
    case Reason::KeepAliveTimeout: return "keep alive timeout";
    case Reason::SessionTakenOver: return "session taken over";
    case Reason::TopicFilterInvalid: return "topic filter invalid";
    case Reason::TopicNameInvalid: return "topic name invalid";
    case Reason::ReceiveMaximumExceeded: return "receive maximum exceeded";
    case Reason::TopicAliasInvalid: return "topic alias invalid";
    case Reason::PacketTooLarge: return "packet too large";
    case Reason::QuotaExceeded: return "quota exceeded";
    case Reason::UseAnotherServer: return "use another server";
    case Reason::PayloadFormatInvalid: return "payload format invalid";
    case Reason::ConnectionRateExceeded: return "connection rate exceeded";
    default: return "error";
  }
}

uint8_t connack_code_v311(Reason r) {
  switch (r) {
    case Reason::Success: return 0;
    case Reason::UnsupportedProtocolVersion: return 1;
    case Reason::ClientIdentifierNotValid: return 2;
    case Reason::ServerUnavailable:
    case Reason::ServerBusy: return 3;
    case Reason::BadUserNameOrPassword: return 4;
    case Reason::NotAuthorized: return 5;
    default: return 3;
  }
}

size_t encode_connack(std::span<uint8_t> out, Version v, const Connack& c) {
  Writer w(out);
  w.u8(header(PacketType::Connack));
  if (v == Version::V311) {
    w.u8(2), w.u8(c.session_present), w.u8(connack_code_v311(c.reason));
    return w.size();
  }
  const size_t props = connack_props_size(c);
  w.varint(static_cast<uint32_t>(2 + varint_size(static_cast<uint32_t>(props)) + props));
  w.u8(c.session_present), w.u8(static_cast<uint8_t>(c.reason));
  w.varint(static_cast<uint32_t>(props));
  connack_props(w, c);
  return w.size();
}

uint64_t forwarded_deadline(std::span<const uint8_t> forwarded) {
  if (forwarded.size() < kForwardedHead) return 0;
  uint64_t deadline = 0;
  std::memcpy(&deadline, forwarded.data(), sizeof deadline);
  return deadline;
}

uint32_t expiry_left_s(uint64_t deadline_ns, uint64_t now_ns) {
  if (now_ns >= deadline_ns) return 0;
  const uint64_t left = (deadline_ns - now_ns + 999'999'999) / 1'000'000'000;
  return left > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(left);
}

namespace {

// The property block of an outgoing PUBLISH with the message's forwarded
// properties: Message Expiry Interval (5 bytes) first, then the rest as received.
size_t message_props_size(std::span<const uint8_t> forwarded) {
  if (forwarded.size() < kForwardedHead) return 0;
  return (forwarded_deadline(forwarded) != 0 ? 5 : 0) + forwarded.size() - kForwardedHead;
}

void message_props(Writer& w, std::span<const uint8_t> forwarded, uint32_t expiry_s) {
  if (forwarded.size() < kForwardedHead) return;
  if (forwarded_deadline(forwarded) != 0) w.u8(0x02), w.u32(expiry_s);
  w.bytes(forwarded.subspan(kForwardedHead));
}

// The broker's topic as the MQTT topic it stands for (topic_map.h): empty
// levels written back where the broker has kEmptyLevel.
void write_mqtt_topic(Writer& w, std::string_view topic) {
  if (topic.find(kEmptyLevel) == std::string_view::npos) return w.utf8(topic);
  std::string scratch;  // only for a topic with an empty MQTT level
  w.utf8(mqtt_topic(topic, scratch));
}

size_t publish_rest(Version v, std::string_view topic, uint8_t qos, size_t payload_size, size_t props) {
  return 2 + mqtt_topic_size(topic) + (qos ? 2 : 0) + (v == Version::V5 ? varint_size(static_cast<uint32_t>(props)) + props : 0) +
         payload_size;
}

}  // namespace

size_t publish_header_size(Version v, std::string_view topic, uint8_t qos, size_t payload_size,
                           std::span<const uint8_t> forwarded) {
  const size_t rest = publish_rest(v, topic, qos, payload_size, message_props_size(forwarded));
  return 1 + varint_size(static_cast<uint32_t>(rest)) + rest - payload_size;
}

size_t encode_publish_header(std::span<uint8_t> out, Version v, std::string_view topic, uint8_t qos, bool retain,
                             uint16_t packet_id, size_t payload_size, std::span<const uint8_t> forwarded,
                             uint64_t now_ns) {
  if (v != Version::V5) forwarded = {};  // 3.1.1 has no properties
  const uint64_t deadline = forwarded_deadline(forwarded);
  const uint32_t expiry_s = deadline == 0 ? 0 : expiry_left_s(deadline, now_ns);
  if (deadline != 0 && expiry_s == 0) return 0;  // expired: not sent [MQTT-3.3.2-5]
  const size_t props = message_props_size(forwarded);
  const size_t rest = publish_rest(v, topic, qos, payload_size, props);
  if (rest > kMaxRemainingLength || topic.size() > 0xFFFF) return 0;
  Writer w(out);
  w.u8(header(PacketType::Publish, static_cast<uint8_t>(qos << 1 | (retain ? 1 : 0))));
  w.varint(static_cast<uint32_t>(rest));
  write_mqtt_topic(w, topic);
  if (qos) w.u16(packet_id);
  if (v == Version::V5) {
    w.varint(static_cast<uint32_t>(props));
    message_props(w, forwarded, expiry_s);
  }
  return w.size();
}

namespace {

// Where an encoded PUBLISH's parts are (MQTT 5: `props` is its property block).
struct PublishLayout {
  size_t topic_at = 0;  // the topic's length prefix
  size_t topic_size = 0;
  size_t props_at = 0;  // the property length (MQTT 5)
  std::span<const uint8_t> props;
  std::span<const uint8_t> payload;
};

bool layout_of(std::span<const uint8_t> p, Version v, PublishLayout& out) {
  if (p.size() < 2 || (p[0] & 0xF0) != 0x30) return false;
  uint32_t rest = 0;
  const int n = read_varint(p.subspan(1), rest);
  const size_t at = 1 + static_cast<size_t>(n > 0 ? n : 0);
  if (n <= 0 || at + 2 > p.size() || at + rest != p.size()) return false;
  out.topic_at = at;
  out.topic_size = static_cast<size_t>(p[at]) << 8 | p[at + 1];
  size_t next = at + 2 + out.topic_size + (((p[0] >> 1) & 3) != 0 ? 2 : 0);
  if (next > p.size()) return false;
  out.props_at = next;
  if (v == Version::V5) {
    uint32_t length = 0;
    const int m = read_varint(p.subspan(next), length);
    if (m <= 0 || length > p.size() - next - static_cast<size_t>(m)) return false;
    out.props = p.subspan(next + static_cast<size_t>(m), length);
    next += static_cast<size_t>(m) + length;
  }
  out.payload = p.subspan(next);
  return true;
}

}  // namespace

size_t message_expiry_at(std::span<const uint8_t> publish, Version v) {
  PublishLayout l;
  if (v != Version::V5 || !layout_of(publish, v, l) || l.props.size() < 5 || l.props[0] != 0x02) return 0;
  return static_cast<size_t>(l.props.data() - publish.data()) + 1;
}

std::string_view publish_topic(std::span<const uint8_t> publish) {
  PublishLayout l;
  if (!layout_of(publish, Version::V311, l)) return {};  // the topic comes before any property
  return {reinterpret_cast<const char*>(publish.data() + l.topic_at + 2), l.topic_size};
}

size_t rewritten_publish_max(size_t qos0_size, const PublishRewrite& r) {
  // Packet id, topic alias, each subscription identifier (id byte + varint), a longer property length and remaining length.
  return qos0_size + 2 + 3 + 5 * r.subscription_ids.size() + 4 + 1;
}

size_t rewrite_publish(std::span<uint8_t> out, std::span<const uint8_t> qos0, Version v, const PublishRewrite& r) {
  PublishLayout l;
  if ((qos0.size() >= 1 && (qos0[0] & 0x06) != 0) || r.qos > 2 || !layout_of(qos0, v, l)) return 0;
  const bool v5 = v == Version::V5;
  // MQTT 5: the message's own properties (if any) are kept, first; this client's are added.
  size_t props = l.props.size();
  if (v5) {
    if (r.topic_alias) props += 3;
    for (uint32_t id : r.subscription_ids) props += 1 + varint_size(id);
  }
  const bool elide = v5 && r.topic_alias && r.topic_elided;
  const size_t new_rest = 2 + (elide ? 0 : l.topic_size) + (r.qos ? 2 : 0) +
                          (v5 ? varint_size(static_cast<uint32_t>(props)) + props : 0) + l.payload.size();
  if (new_rest > kMaxRemainingLength) return 0;
  Writer w(out);
  w.u8(static_cast<uint8_t>((qos0[0] & 0xF9) | r.qos << 1));
  w.varint(static_cast<uint32_t>(new_rest));
  if (elide) {
    w.u16(0);
  } else {
    w.bytes(qos0.subspan(l.topic_at, 2 + l.topic_size));
  }
  if (r.qos) w.u16(r.packet_id);
  if (v5) {
    w.varint(static_cast<uint32_t>(props));
    w.bytes(l.props);
    if (r.topic_alias) w.u8(0x23), w.u16(r.topic_alias);
    for (uint32_t id : r.subscription_ids) w.u8(0x0B), w.varint(id);
  }
  w.bytes(l.payload);
  return w.size();
}

size_t encode_pub_response(std::span<uint8_t> out, Version v, const PubResponse& r) {
  Writer w(out);
  w.u8(header(r.type, r.type == PacketType::Pubrel ? 0x02 : 0));
  // 3.4.2.1: a Success without properties may leave the reason code out.
  const bool with_reason = v == Version::V5 && r.reason != Reason::Success;
  w.u8(with_reason ? 3 : 2);
  w.u16(r.packet_id);
  if (with_reason) w.u8(static_cast<uint8_t>(r.reason));
  return w.size();
}

namespace {
size_t encode_ack_list(std::span<uint8_t> out, PacketType type, Version v, uint16_t packet_id,
                       std::span<const uint8_t> codes) {
  Writer w(out);
  w.u8(header(type));
  w.varint(static_cast<uint32_t>(2 + (v == Version::V5 ? 1 : 0) + codes.size()));
  w.u16(packet_id);
  if (v == Version::V5) w.u8(0);
  w.bytes(codes);
  return w.size();
}
}  // namespace

size_t encode_suback(std::span<uint8_t> out, Version v, uint16_t packet_id, std::span<const uint8_t> codes) {
  return encode_ack_list(out, PacketType::Suback, v, packet_id, codes);
}

size_t encode_unsuback(std::span<uint8_t> out, Version v, uint16_t packet_id, std::span<const uint8_t> codes) {
  // 3.1.1's UNSUBACK has no reason codes.
  const std::span<const uint8_t> listed = v == Version::V5 ? codes : std::span<const uint8_t>{};
  return encode_ack_list(out, PacketType::Unsuback, v, packet_id, listed);
}

size_t encode_pingresp(std::span<uint8_t> out) {
  Writer w(out);
  w.u8(header(PacketType::Pingresp)), w.u8(0);
  return w.size();
}

size_t encode_disconnect(std::span<uint8_t> out, Version v, Reason reason, std::string_view reason_string) {
  if (v != Version::V5) return 0;
  if (reason_string.size() > 200) reason_string = reason_string.substr(0, 200);
  const size_t props = str_prop(reason_string);
  Writer w(out);
  w.u8(header(PacketType::Disconnect));
  w.varint(static_cast<uint32_t>(1 + varint_size(static_cast<uint32_t>(props)) + props));
  w.u8(static_cast<uint8_t>(reason));
  w.varint(static_cast<uint32_t>(props));
  if (props) w.u8(0x1F), w.utf8(reason_string);
  return w.size();
}

}  // namespace tw::mqtt
