// The MQTT decoder against hand-assembled packets: valid ones decode to
// their fields, and every rule the specifications make a MUST refuses.
#include <gtest/gtest.h>

#include <vector>

#include "mqtt/codec.h"
#include "mqtt/reader.h"
#include "mqtt/packets.h"

namespace tw::mqtt {
namespace {

using namespace testing;

Packet split(const Bytes& bytes) {
  Packet p;
  EXPECT_EQ(split_packet(bytes, 1 << 20, p), Split::Ok);
  return p;
}

Bytes connect_flags(uint8_t flags, const Bytes& props, const Bytes& payload) {
  return packet(0x10, cat({str("MQTT"), {5, flags, 0, 30}, props, payload}));
}

TEST(MqttSplit, CutsAtTheRemainingLength) {
  Bytes two = cat({packet(0xC0, {}), packet(0xE0, {})});
  Packet p;
  ASSERT_EQ(split_packet(two, 100, p), Split::Ok);
  EXPECT_EQ(p.type, PacketType::Pingreq);
  EXPECT_EQ(p.size, 2u);
  EXPECT_EQ(split_packet(Bytes{0x30}, 100, p), Split::NeedMore);
  EXPECT_EQ(split_packet(Bytes{0x30, 0x05, 0, 1}, 100, p), Split::NeedMore);
}

TEST(MqttSplit, RefusesBadRemainingLengths) {
  Packet p;
  // Five length bytes, and a non-minimal encoding ([MQTT-1.5.5-1]).
  EXPECT_EQ(split_packet(Bytes{0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}, 1 << 30, p), Split::Malformed);
  EXPECT_EQ(split_packet(Bytes{0x30, 0x80, 0x00}, 100, p), Split::Malformed);
  // Over the limit, known before the body arrives.
  EXPECT_EQ(split_packet(Bytes{0x30, 0xFF, 0x7F}, 1000, p), Split::TooLarge);
  EXPECT_EQ(split_packet(Bytes{0x00, 0x00}, 100, p), Split::Malformed);  // type 0 is reserved
}

TEST(MqttConnect, DecodesA311ConnectWithWillAndCredentials) {
  Bytes body = cat({str("MQTT"), {4, 0xEE, 0, 10}, str("cid"), str("w/t"), str("bye"), str("user"), str("pw")});
  const Bytes bytes = packet(0x10, body);  // the decoded views point into it
  Connect c;
  ASSERT_TRUE(decode_connect(split(bytes), c).ok());
  EXPECT_EQ(c.version, Version::V311);
  EXPECT_TRUE(c.clean_start);
  EXPECT_EQ(c.keepalive_s, 10);
  EXPECT_EQ(c.client_id, "cid");
  ASSERT_TRUE(c.has_will);
  EXPECT_EQ(c.will.topic, "w/t");
  EXPECT_EQ(c.will.qos, 1);
  EXPECT_TRUE(c.will.retain);
  EXPECT_EQ(c.username, "user");
  EXPECT_EQ(std::string(c.password.begin(), c.password.end()), "pw");
}

TEST(MqttConnect, DecodesMqtt5Properties) {
  // Session Expiry 60, Receive Maximum 10, Maximum Packet Size 1000, a user property.
  Bytes props = cat({{0x11, 0, 0, 0, 60, 0x21, 0, 10, 0x27, 0, 0, 0x03, 0xE8, 0x26}, str("k"), str("v")});
  Bytes with_len = cat({{static_cast<uint8_t>(props.size())}, props});
  Connect c;
  ASSERT_TRUE(decode_connect(split(connect_flags(0x02, with_len, str("id"))), c).ok());
  EXPECT_EQ(c.version, Version::V5);
  EXPECT_EQ(c.properties.session_expiry, 60u);
  EXPECT_EQ(c.properties.receive_maximum, 10);
  EXPECT_EQ(c.properties.maximum_packet_size, 1000u);
  EXPECT_EQ(c.properties.user_properties, 1u);
}

TEST(MqttConnect, RefusesWhatTheSpecificationForbids) {
  Connect c;
  // Reserved flag [MQTT-3.1.2-3].
  EXPECT_EQ(decode_connect(split(connect_flags(0x03, {0}, str("id"))), c).reason, Reason::MalformedPacket);
  // Will QoS 3.
  EXPECT_EQ(decode_connect(split(connect_flags(0x1C, {0}, cat({str("id"), {0}, str("t"), str("p")}))), c).reason,
            Reason::MalformedPacket);
  // Will flags without a Will.
  EXPECT_EQ(decode_connect(split(connect_flags(0x20, {0}, str("id"))), c).reason, Reason::MalformedPacket);
  // A property CONNECT may not carry (Topic Alias), and one given twice.
  EXPECT_EQ(decode_connect(split(connect_flags(0, {3, 0x23, 0, 1}, str("id"))), c).reason, Reason::ProtocolError);
  EXPECT_EQ(decode_connect(split(connect_flags(0, {6, 0x21, 0, 1, 0x21, 0, 2}, str("id"))), c).reason,
            Reason::ProtocolError);
  // Receive Maximum 0.
  EXPECT_EQ(decode_connect(split(connect_flags(0, {3, 0x21, 0, 0}, str("id"))), c).reason, Reason::ProtocolError);
  // Bytes after the last field; a client id that is not UTF-8; one holding U+0000.
  EXPECT_EQ(decode_connect(split(connect_flags(0, {0}, cat({str("id"), {1}}))), c).reason, Reason::MalformedPacket);
  EXPECT_EQ(decode_connect(split(connect_flags(0, {0}, {0, 2, 0xC3, 0x28})), c).reason, Reason::MalformedPacket);
  EXPECT_EQ(decode_connect(split(connect_flags(0, {0}, {0, 1, 0})), c).reason, Reason::MalformedPacket);
  // Protocol level 3 (MQTT 3.1) and another name.
  EXPECT_EQ(decode_connect(split(packet(0x10, cat({str("MQTT"), {3, 2, 0, 0}, str("x")}))), c).reason,
            Reason::UnsupportedProtocolVersion);
  EXPECT_EQ(decode_connect(split(packet(0x10, cat({str("MQIsdp"), {3, 2, 0, 0}, str("x")}))), c).reason,
            Reason::UnsupportedProtocolVersion);
  // 3.1.1: a password without a user name [MQTT-3.1.2-22].
  EXPECT_EQ(decode_connect(split(packet(0x10, cat({str("MQTT"), {4, 0x42, 0, 0}, str("x"), str("pw")}))), c).reason,
            Reason::MalformedPacket);
}

TEST(MqttPublish, DecodesQos1WithProperties) {
  Bytes body = cat({str("a/b"), {0, 7}, {5, 0x23, 0, 3, 0x01, 1}, str("hi")});
  const Bytes bytes = packet(0x33, body);
  Publish p;
  ASSERT_TRUE(decode_publish(split(bytes), Version::V5, p).ok());
  EXPECT_EQ(p.topic, "a/b");
  EXPECT_EQ(p.qos, 1);
  EXPECT_TRUE(p.retain);
  EXPECT_EQ(p.packet_id, 7);
  EXPECT_EQ(p.properties.topic_alias, 3);
  EXPECT_EQ(p.properties.payload_format, 1);
  EXPECT_EQ(std::string(p.payload.begin(), p.payload.end()), std::string("\0\2hi", 4));
}

TEST(MqttPublish, RefusesBadFlagsTopicsAndIds) {
  Publish p;
  EXPECT_EQ(decode_publish(split(packet(0x36, cat({str("a"), {0, 1}}))), Version::V311, p).reason,
            Reason::MalformedPacket);  // QoS 3
  EXPECT_EQ(decode_publish(split(packet(0x38, str("a"))), Version::V311, p).reason,
            Reason::MalformedPacket);  // DUP on QoS 0
  EXPECT_EQ(decode_publish(split(packet(0x32, cat({str("a"), {0, 0}}))), Version::V311, p).reason,
            Reason::MalformedPacket);  // packet id 0
  EXPECT_EQ(decode_publish(split(packet(0x30, str("a/+"))), Version::V311, p).reason, Reason::TopicNameInvalid);
  EXPECT_EQ(decode_publish(split(packet(0x30, str(""))), Version::V311, p).reason, Reason::MalformedPacket);
  // MQTT 5: a Subscription Identifier from a client is a protocol error.
  EXPECT_EQ(decode_publish(split(packet(0x30, cat({str("a"), {2, 0x0B, 1}}))), Version::V5, p).reason,
            Reason::ProtocolError);
}

TEST(MqttPubResponse, ChecksFlagsAndReadsReasons) {
  PubResponse r;
  ASSERT_TRUE(decode_pub_response(split(packet(0x62, {0, 9})), Version::V311, r).ok());
  EXPECT_EQ(r.type, PacketType::Pubrel);
  EXPECT_EQ(r.packet_id, 9);
  EXPECT_EQ(decode_pub_response(split(packet(0x60, {0, 9})), Version::V311, r).reason,
            Reason::MalformedPacket);  // PUBREL flags must be 0010
  ASSERT_TRUE(decode_pub_response(split(packet(0x40, {0, 9, 0x10, 0})), Version::V5, r).ok());
  EXPECT_EQ(static_cast<uint8_t>(r.reason), 0x10);
  EXPECT_EQ(decode_pub_response(split(packet(0x40, {0, 9, 0})), Version::V311, r).reason, Reason::MalformedPacket);
}

TEST(MqttSubscribe, DecodesFiltersAndOptions) {
  const Bytes bytes = packet(0x82, cat({{0, 1, 0}, str("a/#"), {0x2D}, str("b"), {0}}));
  Subscribe s;
  ASSERT_TRUE(decode_subscribe(split(bytes), Version::V5, s).ok());
  ASSERT_EQ(s.filters.size(), 2u);
  EXPECT_EQ(s.filters[0].filter, "a/#");
  EXPECT_EQ(s.filters[0].qos, 1);
  EXPECT_TRUE(s.filters[0].no_local);
  EXPECT_TRUE(s.filters[0].retain_as_published);
  EXPECT_EQ(s.filters[0].retain_handling, 2);
}

TEST(MqttSubscribe, RefusesWhatTheSpecificationForbids) {
  Subscribe s;
  EXPECT_EQ(decode_subscribe(split(packet(0x80, cat({{0, 1}, str("a"), {0}}))), Version::V311, s).reason,
            Reason::MalformedPacket);  // flags must be 0010
  EXPECT_EQ(decode_subscribe(split(packet(0x82, {0, 1})), Version::V311, s).reason, Reason::ProtocolError);
  EXPECT_EQ(decode_subscribe(split(packet(0x82, cat({{0, 1}, str("a"), {3}}))), Version::V311, s).reason,
            Reason::MalformedPacket);  // QoS 3
  EXPECT_EQ(decode_subscribe(split(packet(0x82, cat({{0, 1}, str("a"), {4}}))), Version::V311, s).reason,
            Reason::MalformedPacket);  // reserved bits in 3.1.1
  EXPECT_EQ(decode_subscribe(split(packet(0x82, cat({{0, 1, 0}, str("a"), {0x30}}))), Version::V5, s).reason,
            Reason::ProtocolError);  // Retain Handling 3
  EXPECT_EQ(decode_unsubscribe(split(packet(0xA2, {0, 1})), Version::V311, s).reason, Reason::ProtocolError);
}

TEST(MqttFilters, FollowTheWildcardRules) {
  for (auto good : {"a", "a/b", "#", "a/#", "+", "+/b/+", "/", "a//b", "$SYS/#"}) {
    EXPECT_TRUE(is_valid_filter(good)) << good;
  }
  for (auto bad : {"", "a#", "a/#/b", "a+", "a/b+", "#/a"}) EXPECT_FALSE(is_valid_filter(bad)) << bad;
}

TEST(MqttDisconnectAndPing, HaveNoSpareBytes) {
  Disconnect d;
  EXPECT_TRUE(decode_disconnect(split(packet(0xE0, {})), Version::V311, d).ok());
  EXPECT_EQ(decode_disconnect(split(packet(0xE0, {0})), Version::V311, d).reason, Reason::MalformedPacket);
  ASSERT_TRUE(decode_disconnect(split(packet(0xE0, {0x04})), Version::V5, d).ok());
  EXPECT_EQ(d.reason, Reason::DisconnectWithWill);
  EXPECT_TRUE(decode_pingreq(split(packet(0xC0, {}))).ok());
  EXPECT_EQ(decode_pingreq(split(packet(0xC1, {}))).reason, Reason::MalformedPacket);
}

TEST(MqttUtf8, RefusesOverlongsSurrogatesAndNul) {
  auto ok = [](Bytes b) { return valid_utf8(b); };
  EXPECT_TRUE(ok({'a', 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0x98, 0x80}));
  EXPECT_FALSE(ok({0xC0, 0xAF}));        // overlong '/'
  EXPECT_FALSE(ok({0xED, 0xA0, 0x80}));  // U+D800
  EXPECT_FALSE(ok({0xF4, 0x90, 0x80, 0x80}));  // past U+10FFFF
  EXPECT_FALSE(ok({0xE2, 0x82}));        // cut short
  EXPECT_FALSE(ok({0}));
}

}  // namespace
}  // namespace tw::mqtt
