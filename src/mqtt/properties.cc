// MQTT 5 properties (section 2.2.2): which packet may carry which, their
// types, and the values the specification forbids.
#include <cstring>

#include "mqtt/codec.h"
#include "mqtt/reader.h"

namespace tw::mqtt {
namespace {

enum class Type : uint8_t { Byte, U16, U32, Varint, Utf8, Binary, Pair };

constexpr uint8_t bit(PropertyContext c) { return static_cast<uint8_t>(1u << static_cast<uint8_t>(c)); }
constexpr uint8_t kConnect = bit(PropertyContext::Connect), kWill = bit(PropertyContext::Will),
                  kPublish = bit(PropertyContext::Publish), kPubResponse = bit(PropertyContext::PubResponse),
                  kSubscribe = bit(PropertyContext::Subscribe), kUnsubscribe = bit(PropertyContext::Unsubscribe),
                  kDisconnect = bit(PropertyContext::Disconnect);

struct Spec {
  uint8_t id;
  Type type;
  uint8_t contexts;  // where a client may send it
};

// Properties only a server sends (CONNACK's, Subscription Identifier in a
// PUBLISH) are absent here: from a client they are protocol errors.
constexpr Spec kSpecs[] = {
    {0x01, Type::Byte, kPublish | kWill},        // Payload Format Indicator
    {0x02, Type::U32, kPublish | kWill},         // Message Expiry Interval
    {0x03, Type::Utf8, kPublish | kWill},        // Content Type
    {0x08, Type::Utf8, kPublish | kWill},        // Response Topic
    {0x09, Type::Binary, kPublish | kWill},      // Correlation Data
    {0x0B, Type::Varint, kSubscribe},            // Subscription Identifier
    {0x11, Type::U32, kConnect | kDisconnect},   // Session Expiry Interval
    {0x15, Type::Utf8, kConnect},                // Authentication Method
    {0x16, Type::Binary, kConnect},              // Authentication Data
    {0x17, Type::Byte, kConnect},                // Request Problem Information
    {0x18, Type::U32, kWill},                    // Will Delay Interval
    {0x19, Type::Byte, kConnect},                // Request Response Information
    {0x1C, Type::Utf8, kDisconnect},             // Server Reference
    {0x1F, Type::Utf8, kPubResponse | kDisconnect},  // Reason String
    {0x21, Type::U16, kConnect},                 // Receive Maximum
    {0x22, Type::U16, kConnect},                 // Topic Alias Maximum
    {0x23, Type::U16, kPublish},                 // Topic Alias
    {0x26, Type::Pair,                           // User Property: in every packet
     kConnect | kWill | kPublish | kPubResponse | kSubscribe | kUnsubscribe | kDisconnect},
    {0x27, Type::U32, kConnect},                 // Maximum Packet Size
};

const Spec* find_spec(uint32_t id) {
  for (const Spec& s : kSpecs)
    if (s.id == id) return &s;
  return nullptr;
}

struct Value {
  uint32_t number = 0;
  std::span<const uint8_t> bytes;
};

Value read_value(Reader& r, Type type) {
  Value v;
  switch (type) {
    case Type::Byte: v.number = r.u8(); break;
    case Type::U16: v.number = r.u16(); break;
    case Type::U32: v.number = r.u32(); break;
    case Type::Varint: v.number = r.varint(); break;
    case Type::Binary: v.bytes = r.binary(); break;
    case Type::Utf8: {
      std::string_view s = r.utf8();
      v.bytes = {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
      break;
    }
    case Type::Pair:
      r.utf8();
      r.utf8();
      break;
  }
  return v;
}

std::string_view text(const Value& v) { return {reinterpret_cast<const char*>(v.bytes.data()), v.bytes.size()}; }

// Stores one property; values the specification forbids are protocol errors.
void store(Reader& r, uint8_t id, const Value& v, Properties& out) {
  const uint32_t n = v.number;
  switch (id) {
    case 0x01:
      if (n > 1) r.fail(Reason::ProtocolError, "Payload Format Indicator other than 0 or 1");
      out.payload_format = static_cast<uint8_t>(n);
      break;
    case 0x02: out.message_expiry = n, out.has_message_expiry = true; break;
    case 0x08: out.response_topic = text(v); break;
    case 0x09: out.correlation_data = v.bytes; break;
    case 0x0B:
      if (n == 0) r.fail(Reason::ProtocolError, "Subscription Identifier 0");
      out.subscription_id = n;
      break;
    case 0x11: out.session_expiry = n, out.has_session_expiry = true; break;
    case 0x15: out.auth_method = text(v); break;
    case 0x17:
    case 0x19:
      if (n > 1) r.fail(Reason::ProtocolError, "Request Problem/Response Information other than 0 or 1");
      break;
    case 0x18: out.will_delay = n; break;
    case 0x21:
      if (n == 0) r.fail(Reason::ProtocolError, "Receive Maximum 0");
      out.receive_maximum = static_cast<uint16_t>(n);
      break;
    case 0x22: out.topic_alias_maximum = static_cast<uint16_t>(n); break;
    case 0x23:
      if (n == 0) r.fail(Reason::TopicAliasInvalid, "Topic Alias 0");  // [MQTT-3.3.2-8]
      out.topic_alias = static_cast<uint16_t>(n);
      break;
    case 0x26: ++out.user_properties; break;
    case 0x27:
      if (n == 0) r.fail(Reason::ProtocolError, "Maximum Packet Size 0");
      out.maximum_packet_size = n;
      break;
    default: break;  // Content Type, Authentication Data, Server Reference, Reason String: validated, not kept
  }
}

// The properties a PUBLISH (or a Will) carries on to subscribers (codec.h):
// all it may carry but Topic Alias (the publisher's), Message Expiry Interval
// (sent anew) and Will Delay Interval (the Will's, for the broker).
bool forwarded(uint32_t id) { return id != 0x23 && id != 0x02 && id != 0x18; }

}  // namespace

size_t forwarded_max(const Properties& p) { return kForwardedHead + p.raw.size(); }

size_t encode_forwarded(std::span<uint8_t> out, const Properties& p, uint64_t now_ns, uint8_t qos) {
  if (out.size() < forwarded_max(p)) return 0;
  const uint64_t deadline = p.message_expiry == 0 ? 0 : now_ns + uint64_t{p.message_expiry} * 1'000'000'000ull;
  std::memcpy(out.data(), &deadline, sizeof deadline);
  out[kForwardedHead - 1] = qos;
  size_t used = kForwardedHead;
  // The block was validated by read_properties: each property is copied whole, as received.
  Reader props(p.raw);
  while (!props.failed() && !props.empty()) {
    const size_t start = p.raw.size() - props.remaining();
    const uint32_t id = props.varint();
    const Spec* spec = find_spec(id);
    if (spec == nullptr) break;
    read_value(props, spec->type);
    const size_t end = p.raw.size() - props.remaining();
    if (props.failed() || !forwarded(id)) continue;
    std::memcpy(out.data() + used, p.raw.data() + start, end - start);
    used += end - start;
  }
  return used == kForwardedHead && deadline == 0 && qos == 2 ? 0 : used;  // 2 | kForwardedStored keeps its head
}

void read_properties(Reader& r, PropertyContext context, Properties& out) {
  const uint32_t length = r.varint();
  if (length > r.remaining()) return r.fail(Reason::MalformedPacket, "property length past the packet's end");
  out.raw = r.take(length);
  Reader props(out.raw);
  uint64_t seen = 0;  // ids below 64 seen so far: each may appear once, User Property excepted
  while (!props.failed() && !props.empty()) {
    const uint32_t id = props.varint();
    const Spec* spec = find_spec(id);
    if (props.failed()) break;
    if (spec == nullptr || !(spec->contexts & bit(context))) {
      props.fail(Reason::ProtocolError, "property not allowed in this packet");
      break;
    }
    if (id != 0x26 && (seen >> id & 1u)) {
      props.fail(Reason::ProtocolError, "property included more than once");
      break;
    }
    seen |= uint64_t{1} << id;
    Value v = read_value(props, spec->type);
    if (!props.failed()) store(props, static_cast<uint8_t>(id), v, out);
  }
  if (props.failed()) r.fail(props.reason(), props.text());
}

}  // namespace tw::mqtt
