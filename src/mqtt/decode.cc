// Decoding what a client sends. Section references are to mqtt-v5.0-os; the
// 3.1.1 rules are the same unless a comment says otherwise.
#include "mqtt/codec.h"
#include "mqtt/reader.h"

namespace tw::mqtt {
namespace {

Fault fault(const Reader& r) { return {r.reason(), r.text()}; }
Fault malformed(const char* text) { return {Reason::MalformedPacket, text}; }

// A topic filter (4.7): '#' alone and last, '+' alone in its level.
bool valid_filter(std::string_view f) {
  if (f.empty()) return false;
  for (size_t i = 0; i < f.size(); ++i) {
    const bool level_start = i == 0 || f[i - 1] == '/';
    const bool level_end = i + 1 == f.size() || f[i + 1] == '/';
    if (f[i] == '+' && !(level_start && level_end)) return false;
    if (f[i] == '#' && !(level_start && i + 1 == f.size())) return false;
  }
  return true;
}

// The fixed header's flags where they are reserved (2.1.3).
Fault check_flags(const Packet& p, uint8_t expected) {
  return p.flags == expected ? Fault{} : malformed("reserved fixed-header flags are wrong");
}

// A packet identifier, never 0 (2.2.1).
uint16_t read_packet_id(Reader& r) {
  const uint16_t id = r.u16();
  if (!r.failed() && id == 0) r.fail(Reason::MalformedPacket, "packet identifier 0");
  return id;
}

// SUBSCRIBE and UNSUBSCRIBE open alike: flags 0010 ([MQTT-3.8.1-1],
// [MQTT-3.10.1-1]), a packet identifier, MQTT 5 properties.
Fault read_list_head(const Packet& p, Version v, PropertyContext context, Reader& r, Subscribe& out) {
  if (auto f = check_flags(p, 0x02); !f.ok()) return f;
  out.packet_id = read_packet_id(r);
  if (v == Version::V5) read_properties(r, context, out.properties);
  return {};
}

Fault finish(const Reader& r) {
  if (r.failed()) return fault(r);
  if (!r.empty()) return malformed("bytes after the packet's last field");
  return {};
}

void read_will(Reader& r, Version v, uint8_t flags, Connect& c) {
  c.will.qos = (flags >> 3) & 3;
  c.will.retain = flags & 0x20;
  if (v == Version::V5) read_properties(r, PropertyContext::Will, c.will.properties);
  c.will.topic = r.utf8();
  c.will.payload = r.binary();
  if (r.failed()) return;
  if (c.will.qos == 3) return r.fail(Reason::MalformedPacket, "Will QoS 3");
  if (c.will.topic.empty() || c.will.topic.find_first_of("+#") != std::string_view::npos) {
    r.fail(Reason::TopicNameInvalid, "Will topic is empty or has wildcards");
  }
}

}  // namespace

Split split_packet(std::span<const uint8_t> in, size_t max_size, Packet& out) {
  if (in.size() < 2) return Split::NeedMore;
  uint32_t remaining = 0;
  const int n = read_varint(in.subspan(1), remaining);
  if (n < 0) return Split::Malformed;
  if (n == 0) return Split::NeedMore;
  const size_t size = 1 + static_cast<size_t>(n) + remaining;
  if (size > max_size) return Split::TooLarge;
  if (in.size() < size) return Split::NeedMore;
  out.type = static_cast<PacketType>(in[0] >> 4);
  out.flags = in[0] & 0x0F;
  out.body = in.subspan(1 + static_cast<size_t>(n), remaining);
  out.size = size;
  if (in[0] >> 4 == 0) return Split::Malformed;  // type 0 is reserved
  return Split::Ok;
}

Fault decode_connect(const Packet& p, Connect& c) {
  if (auto f = check_flags(p, 0); !f.ok()) return f;
  Reader r(p.body);
  std::string_view name = r.utf8();
  const uint8_t level = r.u8();
  if (r.failed()) return fault(r);
  if (name != "MQTT") {
    // 3.1's "MQIsdp" and anything else: the 3.1.1 refusal [MQTT-3.1.2-2].
    return {Reason::UnsupportedProtocolVersion, "protocol name is not MQTT"};
  }
  if (level != 4 && level != 5) return {Reason::UnsupportedProtocolVersion, "protocol level is not 4 or 5"};
  c.version = static_cast<Version>(level);
  const uint8_t flags = r.u8();
  c.keepalive_s = r.u16();
  if (r.failed()) return fault(r);
  if (flags & 0x01) return malformed("CONNECT reserved flag set");  // [MQTT-3.1.2-3]
  c.clean_start = flags & 0x02;
  c.has_will = flags & 0x04;
  c.has_password = flags & 0x40;
  c.has_username = flags & 0x80;
  if (!c.has_will && (flags & 0x38)) return malformed("Will QoS or Will Retain set without a Will");
  if (c.version == Version::V311 && c.has_password && !c.has_username) {
    return malformed("password without a user name");  // [MQTT-3.1.2-22]
  }
  if (c.version == Version::V5) read_properties(r, PropertyContext::Connect, c.properties);
  c.client_id = r.utf8();
  if (c.has_will) read_will(r, c.version, flags, c);
  if (c.has_username) c.username = r.utf8();
  if (c.has_password) c.password = r.binary();
  return finish(r);
}

Fault decode_publish(const Packet& p, Version v, Publish& out) {
  out.dup = p.flags & 0x08;
  out.qos = (p.flags >> 1) & 3;
  out.retain = p.flags & 0x01;
  if (out.qos == 3) return malformed("PUBLISH with QoS 3");           // [MQTT-3.3.1-4]
  if (out.qos == 0 && out.dup) return malformed("QoS 0 PUBLISH with DUP set");  // [MQTT-3.3.1-2]
  Reader r(p.body);
  out.topic = r.utf8();
  if (out.qos > 0) out.packet_id = read_packet_id(r);
  if (v == Version::V5) read_properties(r, PropertyContext::Publish, out.properties);
  if (r.failed()) return fault(r);
  out.payload = r.rest();
  if (out.topic.find_first_of("+#") != std::string_view::npos) {
    return {Reason::TopicNameInvalid, "PUBLISH topic has wildcards"};  // [MQTT-3.3.2-2]
  }
  if (out.topic.empty() && (v == Version::V311 || out.properties.topic_alias == 0)) {
    return {v == Version::V5 ? Reason::ProtocolError : Reason::MalformedPacket, "PUBLISH topic is empty"};
  }
  return {};
}

Fault decode_pub_response(const Packet& p, Version v, PubResponse& out) {
  out.type = p.type;
  if (auto f = check_flags(p, p.type == PacketType::Pubrel ? 0x02 : 0x00); !f.ok()) return f;
  Reader r(p.body);
  out.packet_id = read_packet_id(r);
  if (v == Version::V311) return finish(r);
  // 3.4.2.1: without a reason code it is Success; without properties, none.
  if (!r.empty()) out.reason = static_cast<Reason>(r.u8());
  if (!r.empty()) {
    Properties props;
    read_properties(r, PropertyContext::PubResponse, props);
  }
  return finish(r);
}

Fault decode_subscribe(const Packet& p, Version v, Subscribe& out) {
  Reader r(p.body);
  if (auto f = read_list_head(p, v, PropertyContext::Subscribe, r, out); !f.ok()) return f;
  while (!r.failed() && !r.empty()) {
    TopicFilter t;
    t.filter = r.utf8();
    const uint8_t options = r.u8();
    if (r.failed()) break;
    t.qos = options & 3;
    if (t.qos == 3) return malformed("SUBSCRIBE with QoS 3");
    if (v == Version::V311 && (options & 0xFC)) return malformed("SUBSCRIBE reserved option bits set");
    if (v == Version::V5) {
      if (options & 0xC0) return malformed("SUBSCRIBE reserved option bits set");
      t.no_local = options & 0x04;
      t.retain_as_published = options & 0x08;
      t.retain_handling = (options >> 4) & 3;
      if (t.retain_handling == 3) return {Reason::ProtocolError, "Retain Handling 3"};
    }
    out.filters.push_back(t);
  }
  if (r.failed()) return fault(r);
  if (out.filters.empty()) return {Reason::ProtocolError, "SUBSCRIBE without a topic filter"};  // [MQTT-3.8.3-3]
  return {};
}

Fault decode_unsubscribe(const Packet& p, Version v, Subscribe& out) {
  Reader r(p.body);
  if (auto f = read_list_head(p, v, PropertyContext::Unsubscribe, r, out); !f.ok()) return f;
  while (!r.failed() && !r.empty()) out.filters.push_back({r.utf8()});
  if (r.failed()) return fault(r);
  if (out.filters.empty()) return {Reason::ProtocolError, "UNSUBSCRIBE without a topic filter"};
  return {};
}

Fault decode_disconnect(const Packet& p, Version v, Disconnect& out) {
  if (auto f = check_flags(p, 0); !f.ok()) return f;
  Reader r(p.body);
  if (v == Version::V5 && !r.empty()) out.reason = static_cast<Reason>(r.u8());
  if (v == Version::V5 && !r.empty()) read_properties(r, PropertyContext::Disconnect, out.properties);
  return finish(r);
}

Fault decode_pingreq(const Packet& p) {
  if (auto f = check_flags(p, 0); !f.ok()) return f;
  return p.body.empty() ? Fault{} : malformed("PINGREQ with a body");
}

bool is_valid_filter(std::string_view filter) { return valid_filter(filter); }

}  // namespace tw::mqtt
