// The MQTT encoders: exact bytes where the specification fixes them, and
// what the broker sends decodes back with the broker's own decoder.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mqtt/codec.h"
#include "mqtt/reader.h"

namespace tw::mqtt {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes encoded(size_t max, auto&& encode) {
  Bytes out(max);
  out.resize(encode(std::span<uint8_t>(out)));
  return out;
}

TEST(MqttEncode, Connack311IsFourBytes) {
  Connack c;
  c.reason = Reason::ClientIdentifierNotValid;
  EXPECT_EQ(encoded(64, [&](auto out) { return encode_connack(out, Version::V311, c); }), (Bytes{0x20, 2, 0, 2}));
}

TEST(MqttEncode, Connack5CarriesTheBrokersLimits) {
  Connack c;
  c.assigned_client_id = "tw-1";
  c.receive_maximum = 64;
  c.maximum_packet_size = 1 << 20;
  Bytes b = encoded(128, [&](auto out) { return encode_connack(out, Version::V5, c); });
  ASSERT_GT(b.size(), 5u);
  EXPECT_EQ(b[0], 0x20);
  EXPECT_EQ(b[1] + 2u, b.size());  // the remaining length covers the rest
  EXPECT_EQ(b[2], 0);              // no session present
  EXPECT_EQ(b[3], 0);              // success
  Reader r(std::span<const uint8_t>(b).subspan(4));
  const uint32_t length = r.varint();
  EXPECT_EQ(length, r.remaining());
  // Assigned Client Identifier first, then Receive Maximum.
  EXPECT_EQ(r.u8(), 0x12);
  EXPECT_EQ(r.utf8(), "tw-1");
  EXPECT_EQ(r.u8(), 0x21);
  EXPECT_EQ(r.u16(), 64);
}

TEST(MqttEncode, PublishHeaderDecodesBack) {
  for (Version v : {Version::V311, Version::V5}) {
    const std::string payload(300, 'x');  // a two-byte remaining length
    Bytes b(publish_header_size(v, "a/b", 1, payload.size()) + payload.size());
    const size_t head = encode_publish_header(b, v, "a/b", 1, true, 42, payload.size());
    ASSERT_EQ(head, publish_header_size(v, "a/b", 1, payload.size()));
    std::copy(payload.begin(), payload.end(), b.begin() + static_cast<long>(head));
    Packet p;
    ASSERT_EQ(split_packet(b, 1 << 20, p), Split::Ok);
    Publish msg;
    ASSERT_TRUE(decode_publish(p, v, msg).ok());
    EXPECT_EQ(msg.topic, "a/b");
    EXPECT_EQ(msg.packet_id, 42);
    EXPECT_TRUE(msg.retain);
    EXPECT_EQ(msg.payload.size(), payload.size());
  }
}

// A broker topic with the empty-level marker (topic_map.h) goes out as the MQTT topic it stands for.
TEST(MqttEncode, PublishWritesEmptyLevelsBack) {
  for (Version v : {Version::V311, Version::V5}) {
    const std::string_view topic = "\u2205/TopicA/\u2205";
    Bytes b(publish_header_size(v, topic, 0, 0));
    ASSERT_EQ(encode_publish_header(b, v, topic, 0, false, 0, 0), b.size());
    Packet p;
    ASSERT_EQ(split_packet(b, 1 << 20, p), Split::Ok);
    Publish msg;
    ASSERT_TRUE(decode_publish(p, v, msg).ok());
    EXPECT_EQ(msg.topic, "/TopicA/");
    EXPECT_EQ(publish_topic(b), "/TopicA/");
  }
}

TEST(MqttEncode, TooSmallABufferGivesZero) {
  Bytes b(4);
  EXPECT_EQ(encode_publish_header(b, Version::V311, "a/b", 0, false, 0, 0), 0u);
  EXPECT_EQ(encode_disconnect(b, Version::V5, Reason::ProtocolError, "a reason that does not fit"), 0u);
}

TEST(MqttEncode, AcknowledgementsAreExact) {
  EXPECT_EQ(encoded(8, [](auto out) { return encode_pub_response(out, Version::V311, {PacketType::Pubrel, 7}); }),
            (Bytes{0x62, 2, 0, 7}));
  EXPECT_EQ(encoded(8, [](auto out) {
              return encode_pub_response(out, Version::V5, {PacketType::Puback, 7, Reason::NotAuthorized});
            }),
            (Bytes{0x40, 3, 0, 7, 0x87}));
  const Bytes codes = {0x00, 0x80};
  EXPECT_EQ(encoded(16, [&](auto out) { return encode_suback(out, Version::V311, 5, codes); }),
            (Bytes{0x90, 4, 0, 5, 0x00, 0x80}));
  EXPECT_EQ(encoded(16, [&](auto out) { return encode_suback(out, Version::V5, 5, codes); }),
            (Bytes{0x90, 5, 0, 5, 0, 0x00, 0x80}));
  EXPECT_EQ(encoded(16, [&](auto out) { return encode_unsuback(out, Version::V311, 5, codes); }),
            (Bytes{0xB0, 2, 0, 5}));
  EXPECT_EQ(encoded(4, [](auto out) { return encode_pingresp(out); }), (Bytes{0xD0, 0}));
}

TEST(MqttEncode, DisconnectOnlyInMqtt5) {
  EXPECT_EQ(encoded(32, [](auto out) { return encode_disconnect(out, Version::V311, Reason::ProtocolError, ""); }),
            Bytes{});
  EXPECT_EQ(encoded(32, [](auto out) { return encode_disconnect(out, Version::V5, Reason::MalformedPacket, ""); }),
            (Bytes{0xE0, 2, 0x81, 0}));
  EXPECT_EQ(encoded(32, [](auto out) { return encode_disconnect(out, Version::V5, Reason::ProtocolError, "x"); }),
            (Bytes{0xE0, 6, 0x82, 4, 0x1F, 0, 1, 'x'}));
}

TEST(MqttEncode, VarintSizes) {
  EXPECT_EQ(varint_size(127), 1u);
  EXPECT_EQ(varint_size(128), 2u);
  EXPECT_EQ(varint_size(16383), 2u);
  EXPECT_EQ(varint_size(16384), 3u);
  EXPECT_EQ(varint_size(kMaxRemainingLength), 4u);
}

// A subscriber's own PUBLISH is the shared QoS 0 encoding rewritten: the
// result decodes with the broker's own decoder to the same message plus
// what was added.
Bytes shared_qos0(Version v, std::string_view topic, std::string_view payload, bool retain = false) {
  Bytes out(64);
  const size_t head = encode_publish_header(out, v, topic, 0, retain, 0, payload.size());
  out.resize(head);
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

Publish decoded_publish(const Bytes& b, Version v) {
  Packet p;
  EXPECT_EQ(split_packet(b, 1 << 20, p), Split::Ok);
  Publish msg;
  EXPECT_TRUE(decode_publish(p, v, msg).ok());
  return msg;
}

TEST(MqttEncode, ARewritten311PublishGetsItsQosAndPacketId) {
  const Bytes qos0 = shared_qos0(Version::V311, "a/b", "hello", true);
  PublishRewrite r;
  r.qos = 1;
  r.packet_id = 300;
  const Bytes b = encoded(rewritten_publish_max(qos0.size(), r), [&](auto out) {
    return rewrite_publish(out, qos0, Version::V311, r);
  });
  EXPECT_EQ(b[0], 0x33);  // QoS 1, RETAIN kept
  const Publish msg = decoded_publish(b, Version::V311);
  EXPECT_EQ(msg.topic, "a/b");
  EXPECT_EQ(msg.packet_id, 300);
  EXPECT_EQ(std::string(msg.payload.begin(), msg.payload.end()), "hello");
}

TEST(MqttEncode, ARewritten5PublishCarriesItsAliasAndSubscriptionIdentifiers) {
  const Bytes qos0 = shared_qos0(Version::V5, "a/b", "hi");
  const uint32_t ids[] = {7, 200000};
  PublishRewrite r;
  r.topic_alias = 3;
  r.topic_elided = true;
  r.subscription_ids = ids;
  const Bytes b = encoded(rewritten_publish_max(qos0.size(), r), [&](auto out) {
    return rewrite_publish(out, qos0, Version::V5, r);
  });
  // (The broker's decoder refuses this from a client: [MQTT-3.3.4-6] forbids identifiers in its PUBLISH.)
  // Empty topic, then 9 bytes of properties: alias 3, identifier 7, identifier 200000 (a three-byte varint).
  EXPECT_EQ(b, (Bytes{0x30, 14, 0, 0, 9, 0x23, 0, 3, 0x0B, 7, 0x0B, 0xC0, 0x9A, 0x0C, 'h', 'i'}));
}

TEST(MqttEncode, ARewriteRefusesWhatIsNotASharedQos0Publish) {
  PublishRewrite r;
  r.qos = 1;
  Bytes out(64);
  const Bytes pingresp = {0xD0, 0};
  EXPECT_EQ(rewrite_publish(out, pingresp, Version::V311, r), 0u);
  Bytes truncated = shared_qos0(Version::V311, "a/b", "x");
  truncated.pop_back();
  EXPECT_EQ(rewrite_publish(out, truncated, Version::V311, r), 0u);
  EXPECT_EQ(rewrite_publish(std::span<uint8_t>(out).first(4), shared_qos0(Version::V311, "a/b", "x"), Version::V311, r),
            0u);  // too small
}


// ---- the properties a PUBLISH carries on to subscribers (codec.h, "forwarded")

// A client's MQTT 5 QoS 0 PUBLISH of "hi" on a/b with these properties (their length included).
Publish client_publish(Bytes& storage, const Bytes& props) {
  storage = {0x30};
  Bytes body = {0, 3, 'a', '/', 'b'};
  body.insert(body.end(), props.begin(), props.end());
  body.insert(body.end(), {'h', 'i'});
  storage.push_back(static_cast<uint8_t>(body.size()));
  storage.insert(storage.end(), body.begin(), body.end());
  return decoded_publish(storage, Version::V5);
}

// Topic Alias 1, User Property (k, v), Message Expiry 10 s, Content Type "t", User Property (k, w),
// Response Topic "r", Correlation Data {7}, Payload Format Indicator 1.
const Bytes kClientProps = {36,   0x23, 0, 1, 0x26, 0, 1,   'k', 0, 1, 'v', 0x02, 0,   0, 0,   10, 0x03, 0, 1, 't',
                            0x26, 0,    1, 'k', 0,  1, 'w', 0x08, 0, 1, 'r', 0x09, 0, 1, 7, 0x01, 1};
const Bytes kForwardedProps = {0x26, 0, 1, 'k', 0, 1, 'v', 0x03, 0, 1, 't', 0x26, 0, 1, 'k', 0, 1, 'w',
                               0x08, 0, 1, 'r', 0x09, 0, 1, 7,   0x01, 1};
constexpr uint64_t kSecond = 1'000'000'000;

Bytes forwarded_of(const Publish& msg, uint64_t now_ns) {
  Bytes out(forwarded_max(msg.properties));
  out.resize(encode_forwarded(out, msg.properties, now_ns));
  return out;
}

TEST(MqttForwarded, KeepsAllButTheTopicAliasAndTheExpiryInTheOrderReceived) {
  Bytes storage;
  const Publish msg = client_publish(storage, kClientProps);
  const Bytes f = forwarded_of(msg, 5 * kSecond);
  ASSERT_EQ(f.size(), kForwardedHead + kForwardedProps.size());
  EXPECT_EQ(forwarded_deadline(f), 15 * kSecond);
  EXPECT_EQ(Bytes(f.begin() + kForwardedHead, f.end()), kForwardedProps);
}

TEST(MqttForwarded, NothingToForwardIsEmptyAndAnExpiryOf0IsNone) {
  Bytes storage;
  EXPECT_TRUE(forwarded_of(client_publish(storage, {3, 0x23, 0, 1}), kSecond).empty());
  EXPECT_FALSE(forwarded_expired(Bytes{}, 99 * kSecond));  // no expiry: never expired
  EXPECT_TRUE(forwarded_of(client_publish(storage, {5, 0x02, 0, 0, 0, 0}), kSecond).empty());
  const Bytes expiry_only = forwarded_of(client_publish(storage, {5, 0x02, 0, 0, 0, 1}), kSecond);
  EXPECT_EQ(expiry_only.size(), kForwardedHead);
  EXPECT_EQ(forwarded_deadline(expiry_only), 2 * kSecond);
}

TEST(MqttForwarded, TheExpirySentIsTheReceivedOneLessTheWholeSecondsWaited) {
  EXPECT_EQ(expiry_left_s(15 * kSecond, 5 * kSecond), 10u);
  EXPECT_EQ(expiry_left_s(15 * kSecond, 7 * kSecond + kSecond / 2), 8u);  // 2.5 s waited: 10 - 2
  EXPECT_EQ(expiry_left_s(15 * kSecond, 15 * kSecond - 1), 1u);
  EXPECT_EQ(expiry_left_s(15 * kSecond, 15 * kSecond), 0u);
}

// The broker's PUBLISH to an MQTT 5 subscriber carries them: the expiry
// first, as of the time it is encoded, then the rest as received. It
// decodes with the broker's own decoder (a client may send all of these).
Bytes broker_publish(Version v, std::span<const uint8_t> forwarded, uint64_t now_ns, uint8_t qos = 0) {
  Bytes out(publish_header_size(v, "a/b", qos, 2, forwarded) + 2);
  const size_t head = encode_publish_header(out, v, "a/b", qos, false, qos ? 9 : 0, 2, forwarded, now_ns);
  if (head == 0) return {};
  EXPECT_EQ(head + 2, out.size());
  out[head] = 'h', out[head + 1] = 'i';
  return out;
}

TEST(MqttForwarded, AnMqtt5PublishCarriesThemWithWhatIsLeftOfTheExpiry) {
  Bytes storage;
  const Bytes f = forwarded_of(client_publish(storage, kClientProps), 5 * kSecond);
  const Bytes b = broker_publish(Version::V5, f, 7 * kSecond + kSecond / 2);
  ASSERT_FALSE(b.empty());
  const Publish back = decoded_publish(b, Version::V5);
  EXPECT_EQ(back.topic, "a/b");
  EXPECT_EQ(back.properties.message_expiry, 8u);
  EXPECT_EQ(back.properties.response_topic, "r");
  EXPECT_EQ(Bytes(back.properties.correlation_data.begin(), back.properties.correlation_data.end()), Bytes{7});
  EXPECT_EQ(back.properties.payload_format, 1);
  EXPECT_EQ(back.properties.user_properties, 2u);
  EXPECT_EQ(back.properties.topic_alias, 0);
  EXPECT_EQ(Bytes(back.properties.raw.begin() + 5, back.properties.raw.end()), kForwardedProps);
  EXPECT_EQ(std::string(back.payload.begin(), back.payload.end()), "hi");
}

TEST(MqttForwarded, AnExpiredMessageEncodesToNothingAnd311NeverCarriesThem) {
  Bytes storage;
  const Bytes f = forwarded_of(client_publish(storage, kClientProps), 5 * kSecond);
  EXPECT_TRUE(broker_publish(Version::V5, f, 15 * kSecond).empty());
  const Bytes v311 = broker_publish(Version::V311, f, 6 * kSecond);
  EXPECT_EQ(v311, (Bytes{0x30, 7, 0, 3, 'a', '/', 'b', 'h', 'i'}));
  EXPECT_EQ(publish_header_size(Version::V311, "a/b", 0, 2, f), 7u);
}

TEST(MqttForwarded, ARewriteKeepsThemFirstAndTheExpiryCanBeFoundForAResend) {
  Bytes storage;
  const Bytes f = forwarded_of(client_publish(storage, kClientProps), 5 * kSecond);
  const Bytes qos0 = broker_publish(Version::V5, f, 5 * kSecond);
  const uint32_t ids[] = {3};
  PublishRewrite r;
  r.qos = 1;
  r.packet_id = 77;
  r.subscription_ids = ids;
  Bytes b = encoded(rewritten_publish_max(qos0.size(), r), [&](auto out) {
    return rewrite_publish(out, qos0, Version::V5, r);
  });
  // 0x32, remaining length, topic, packet id 77, 35 bytes of properties: the message's 33, then identifier 3.
  ASSERT_GT(b.size(), 12u);
  EXPECT_EQ(Bytes(b.begin() + 7, b.begin() + 15), (Bytes{0, 77, 35, 0x02, 0, 0, 0, 10}));
  EXPECT_EQ(Bytes(b.end() - 4, b.end()), (Bytes{0x0B, 3, 'h', 'i'}));
  const size_t at = message_expiry_at(b, Version::V5);
  EXPECT_EQ(at, 11u);
  EXPECT_EQ(message_expiry_at(b, Version::V311), 0u);
  EXPECT_EQ(message_expiry_at(shared_qos0(Version::V5, "a/b", "x"), Version::V5), 0u);
}

}  // namespace
}  // namespace tw::mqtt
