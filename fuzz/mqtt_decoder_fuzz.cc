// Fuzzes the MQTT packet splitter and every decoder (src/mqtt/codec.h).
// Arbitrary bytes are cut into packets as an MQTT connection would; each is
// decoded as both MQTT 3.1.1 and 5.0. A 3.1.1 PUBLISH that decodes must
// re-encode to the very same bytes (it has no properties, and the splitter
// only accepts the shortest remaining-length form). The rewrite of a
// shared QoS 0 PUBLISH for one subscriber (rewrite_publish) runs on every
// PUBLISH's bytes, and a 3.1.1 QoS 0 one rewritten at QoS 1 must decode to
// the same message with its packet id. An MQTT 5 PUBLISH's properties, as
// the broker carries them on to subscribers, must decode back unchanged
// (less the Topic Alias). Any crash, sanitizer report or mismatch aborts.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "mqtt/codec.h"

namespace {

using namespace tw::mqtt;

constexpr size_t kFuzzMaxPacket = 4096;  // small: the fuzzer also reaches TooLarge

[[noreturn]] void fail(const char* what, const Packet& p) {
  std::fprintf(stderr, "mqtt_decoder_fuzz: %s (type %u, size %zu)\n", what, static_cast<unsigned>(p.type), p.size);
  std::abort();
}

void check_publish_reencodes(std::span<const uint8_t> bytes, const Packet& p) {
  Publish msg;
  if (!decode_publish(p, Version::V311, msg).ok()) return;
  std::vector<uint8_t> out(publish_header_size(Version::V311, msg.topic, msg.qos, msg.payload.size()) +
                           msg.payload.size());
  const size_t head = encode_publish_header(out, Version::V311, msg.topic, msg.qos, msg.retain, msg.packet_id,
                                            msg.payload.size());
  if (head == 0) fail("PUBLISH does not re-encode", p);
  if (!msg.payload.empty()) std::memcpy(out.data() + head, msg.payload.data(), msg.payload.size());
  // DUP is not something the broker sends: compare without it.
  std::vector<uint8_t> original(bytes.begin(), bytes.end());
  original[0] &= static_cast<uint8_t>(~0x08);
  if (out != original) fail("PUBLISH re-encodes differently", p);
}

void check_rewrite(std::span<const uint8_t> bytes, const Packet& p) {
  const uint32_t ids[] = {1, 268'435'455};
  PublishRewrite every;
  every.qos = 2, every.packet_id = 42, every.topic_alias = 7, every.topic_elided = true, every.subscription_ids = ids;
  std::vector<uint8_t> out(rewritten_publish_max(bytes.size(), every));
  for (Version v : {Version::V311, Version::V5}) (void)rewrite_publish(out, bytes, v, every);
  Publish msg;
  if (!decode_publish(p, Version::V311, msg).ok() || msg.qos != 0) return;
  PublishRewrite r;
  r.qos = 1, r.packet_id = 42;
  const size_t n = rewrite_publish(out, bytes, Version::V311, r);
  if (n == 0) fail("QoS 0 PUBLISH does not rewrite", p);
  Packet q;
  Publish again;
  if (split_packet(std::span<const uint8_t>(out).first(n), n, q) != Split::Ok || q.size != n ||
      !decode_publish(q, Version::V311, again).ok()) {
    fail("rewritten PUBLISH does not decode", p);
  }
  if (again.topic != msg.topic || again.qos != 1 || again.packet_id != 42 || again.retain != msg.retain ||
      !std::equal(again.payload.begin(), again.payload.end(), msg.payload.begin(), msg.payload.end())) {
    fail("rewritten PUBLISH differs", p);
  }
}

// An MQTT 5 PUBLISH that decodes: the properties it carries on (codec.h,
// the forwarded string) in the broker's PUBLISH to a subscriber must decode
// back to the same message, less its Topic Alias, with its expiry.
bool same_properties(const Properties& a, const Properties& b) {
  return a.response_topic == b.response_topic && a.payload_format == b.payload_format &&
         a.user_properties == b.user_properties && a.message_expiry == b.message_expiry &&
         std::equal(a.correlation_data.begin(), a.correlation_data.end(), b.correlation_data.begin(),
                    b.correlation_data.end());
}

void check_forwarded(const Packet& p) {
  Publish msg;
  if (!decode_publish(p, Version::V5, msg).ok() || msg.topic.empty()) return;
  constexpr uint64_t kNow = 1;  // the message goes out the instant it came: its whole expiry is left
  std::vector<uint8_t> f(forwarded_max(msg.properties));
  f.resize(encode_forwarded(f, msg.properties, kNow));
  const size_t size = publish_header_size(Version::V5, msg.topic, 0, msg.payload.size(), f) + msg.payload.size();
  std::vector<uint8_t> out(size);
  const size_t head = encode_publish_header(out, Version::V5, msg.topic, 0, false, 0, msg.payload.size(), f, kNow);
  if (head == 0 || head + msg.payload.size() != size) fail("forwarded properties do not encode", p);
  if (!msg.payload.empty()) std::memcpy(out.data() + head, msg.payload.data(), msg.payload.size());
  Packet q;
  Publish again;
  if (split_packet(out, out.size(), q) != Split::Ok || !decode_publish(q, Version::V5, again).ok()) {
    fail("PUBLISH with forwarded properties does not decode", p);
  }
  if (again.topic != msg.topic || again.properties.topic_alias != 0 || !same_properties(again.properties, msg.properties) ||
      !std::equal(again.payload.begin(), again.payload.end(), msg.payload.begin(), msg.payload.end())) {
    fail("PUBLISH with forwarded properties differs", p);
  }
}

void decode_all(std::span<const uint8_t> bytes, const Packet& p) {
  for (Version v : {Version::V311, Version::V5}) {
    Connect c;
    Publish pub;
    PubResponse r;
    Subscribe s, u;
    Disconnect d;
    switch (p.type) {
      case PacketType::Connect: (void)decode_connect(p, c); break;
      case PacketType::Publish: (void)decode_publish(p, v, pub); break;
      case PacketType::Puback:
      case PacketType::Pubrec:
      case PacketType::Pubrel:
      case PacketType::Pubcomp: (void)decode_pub_response(p, v, r); break;
      case PacketType::Subscribe:
        if (decode_subscribe(p, v, s).ok()) {
          for (const TopicFilter& f : s.filters) (void)is_valid_filter(f.filter);
        }
        break;
      case PacketType::Unsubscribe: (void)decode_unsubscribe(p, v, u); break;
      case PacketType::Disconnect: (void)decode_disconnect(p, v, d); break;
      case PacketType::Pingreq: (void)decode_pingreq(p); break;
      default: break;
    }
  }
  if (p.type == PacketType::Publish) {
    check_publish_reencodes(bytes, p);
    check_rewrite(bytes, p);
    check_forwarded(p);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  size_t pos = 0;
  while (pos < in.size()) {
    Packet p;
    const Split split = split_packet(in.subspan(pos), kFuzzMaxPacket, p);
    if (split != Split::Ok) break;
    if (p.size > in.size() - pos || p.size != static_cast<size_t>(p.body.data() - (data + pos)) + p.body.size()) {
      fail("packet size inconsistent", p);
    }
    decode_all(in.subspan(pos, p.size), p);
    pos += p.size;
  }
  return 0;
}
