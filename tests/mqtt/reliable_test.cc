// QoS 1 and 2 to subscribers (src/mqtt/reliable.cc): granted QoS, packet
// ids, the acknowledgement flows, the in-flight window of the client's
// Receive Maximum and what a full window does, and redelivery with DUP
// when a stored session resumes.
#include <algorithm>

#include <gtest/gtest.h>

#include "mqtt/harness.h"

namespace tw::mqtt {
namespace {

using namespace testing;

Bytes ack(uint8_t first, uint16_t id) { return packet(first, {static_cast<uint8_t>(id >> 8), static_cast<uint8_t>(id)}); }
constexpr uint8_t kPuback = 0x40, kPubrec = 0x50, kPubrel = 0x62, kPubcomp = 0x70;

TEST(MqttReliable, AQos1SubscriptionGetsQos1PublishesWithPacketIds) {
  MqttHarness h;
  h.connect();
  auto got = h.send(packet(0x82, cat({{0, 1, 0}, str("q/#"), {1}, str("z/#"), {2}})));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].body, (Bytes{0, 1, 0, 0x01, 0x02}));  // granted QoS 1 and 2
  h.publish("q/a", "one");
  h.publish("q/a", "two");
  auto live = h.turn();
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(live[0].first, 0x32);
  EXPECT_EQ(live[0].payload(), "one");
  EXPECT_EQ(live[1].payload(), "two");
  EXPECT_NE(live[0].packet_id(), 0);
  EXPECT_NE(live[0].packet_id(), live[1].packet_id());
  EXPECT_TRUE(h.send(ack(kPuback, live[0].packet_id())).empty());
  EXPECT_TRUE(h.send(ack(kPuback, live[1].packet_id())).empty());
  EXPECT_FALSE(h.session->closing());
}

TEST(MqttReliable, Qos2GoesThroughPubrecPubrelPubcomp) {
  MqttHarness h;
  h.connect();
  h.subscribe("z/#", 2);
  h.publish("z/a", "exactly once");
  auto live = h.turn();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].first, 0x34);
  const uint16_t id = live[0].packet_id();
  auto rel = h.send(ack(kPubrec, id));
  ASSERT_EQ(rel.size(), 1u);
  EXPECT_EQ(rel[0].first, kPubrel);
  EXPECT_EQ(rel[0].body, (Bytes{static_cast<uint8_t>(id >> 8), static_cast<uint8_t>(id)}));
  EXPECT_TRUE(h.send(ack(kPubcomp, id)).empty());
  EXPECT_FALSE(h.session->closing());
  // A PUBACK for a QoS 2 message is the wrong acknowledgement: a protocol error.
  h.publish("z/a", "again");
  live = h.turn();
  ASSERT_EQ(live.size(), 1u);
  h.send(ack(kPuback, live[0].packet_id()));
  EXPECT_TRUE(h.session->closing());
}

// The PUBLISHes among what came back (the client's own acknowledgements aside).
std::vector<Received> publishes(const std::vector<Received>& got) {
  std::vector<Received> out;
  for (const Received& r : got) {
    if ((r.first >> 4) == 3) out.push_back(r);
  }
  return out;
}

// A client's PUBLISH (MQTT 5, no properties) at this QoS, with packet id 7 when it has one.
Bytes client_publish(std::string_view topic, uint8_t qos, std::string_view payload, bool retain = false) {
  const Bytes id = qos ? Bytes{0, 7} : Bytes{};
  return packet(static_cast<uint8_t>(0x30 | qos << 1 | (retain ? 1 : 0)),
                cat({str(topic), id, {0}, Bytes(payload.begin(), payload.end())}));
}

TEST(MqttReliable, AMessageReachesASubscriptionAtNoMoreThanTheQosItWasPublishedWith) {
  MqttHarness h;
  h.connect();
  // The retained message keeps the QoS it was published with, and a
  // RETAIN 0 message after it (set aside) does not change it.
  h.send(client_publish("m/r", 1, "kept", true));
  h.send(client_publish("m/r", 0, "transient"));
  auto retained = h.subscribe("m/#", 2);
  ASSERT_EQ(retained.size(), 1u);
  EXPECT_EQ(retained[0].payload(), "kept");
  EXPECT_EQ(retained[0].qos(), 1);
  h.send(ack(kPuback, retained[0].packet_id()));
  // [MQTT-3.8.4-8]: live, the minimum of the publisher's QoS and the granted one.
  for (uint8_t qos : {0, 1, 2}) {
    auto got = publishes(h.send(client_publish("m/a", qos, "live")));
    ASSERT_EQ(got.size(), 1u) << int{qos};
    EXPECT_EQ(got[0].qos(), qos);
    if (qos == 1) h.send(ack(kPuback, got[0].packet_id()));
    if (qos == 2) h.send(ack(kPubrec, got[0].packet_id())), h.send(ack(kPubcomp, got[0].packet_id()));
  }
  // A native message has no QoS of its own: the granted one.
  h.publish("m/b", "native");
  auto native = h.turn();
  ASSERT_EQ(native.size(), 1u);
  EXPECT_EQ(native[0].qos(), 2);
  EXPECT_FALSE(h.session->closing());
}

TEST(MqttReliable, AFullWindowHoldsTheChannelAndSendsItsLatestValueWhenASlotFrees) {
  MqttHarness h;
  h.connect({3, 0x21, 0, 2});  // Receive Maximum 2
  h.subscribe("w/#", 1);
  for (const char* p : {"1", "2", "3", "4"}) h.publish("w/a", p);
  auto live = h.turn();
  ASSERT_EQ(live.size(), 2u);  // [MQTT-3.3.4-9]: no more than Receive Maximum unacknowledged
  EXPECT_EQ(live[1].payload(), "2");
  EXPECT_EQ(h.counters.conflated_channels, 1u);
  auto refresh = h.send(ack(kPuback, live[0].packet_id()));
  ASSERT_EQ(refresh.size(), 1u);  // the conflate policy: the latest value, not 3 then 4
  EXPECT_EQ(refresh[0].qos(), 1);
  EXPECT_EQ(refresh[0].payload(), "4");
}

TEST(MqttReliable, AFullWindowUnderTheDisconnectPolicyClosesAsASlowConsumer) {
  broker::RouterLimits limits;
  limits.default_policy = wire::SlowPolicy::Disconnect;
  MqttHarness h(limits);
  h.connect({3, 0x21, 0, 1});
  h.subscribe("d/#", 1);
  h.publish("d/a", "1");
  EXPECT_FALSE(h.session->closing());
  h.publish("d/a", "2");
  EXPECT_TRUE(h.session->closing());
  EXPECT_EQ(h.counters.slow_consumers, 1u);
}

// The same delivery policy as a native subscriber's (session/delivery_policy.h): its counters and its order.
TEST(MqttReliable, AFullWindowUnderTheDropPolicyDiscardsAndCountsUntilASlotFrees) {
  broker::RouterLimits limits;
  limits.default_policy = wire::SlowPolicy::Drop;
  MqttHarness h(limits);
  h.connect({3, 0x21, 0, 1});  // Receive Maximum 1
  h.subscribe("p/#", 1);
  for (const char* p : {"1", "2", "3"}) h.publish("p/a", p);
  auto live = h.turn();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].payload(), "1");
  EXPECT_EQ(h.counters.dropped_messages, 2u);
  EXPECT_EQ(h.session->slow_stats().dropped_messages, 2u);
  EXPECT_TRUE(h.send(ack(kPuback, live[0].packet_id())).empty());  // no refresh under drop, and MQTT has no gap notice
  h.publish("p/a", "4");
  auto next = h.turn();
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].payload(), "4");
  EXPECT_EQ(next[0].qos(), 1);
  EXPECT_FALSE(h.session->closing());
}

TEST(MqttReliable, HeldChannelsGoInTheOrderTheyWereHeld) {
  MqttHarness h;
  h.connect({3, 0x21, 0, 1});  // Receive Maximum 1
  h.subscribe("o/#", 1);
  for (const char* t : {"o/a", "o/c", "o/b", "o/d"}) h.publish(t, t);
  auto live = h.turn();
  ASSERT_EQ(live.size(), 1u);
  std::vector<std::string> order{live[0].payload()};
  for (int i = 0; i < 3; ++i) {
    auto next = h.send(ack(kPuback, live[0].packet_id()));
    ASSERT_EQ(next.size(), 1u) << "one slot freed, one held channel sent";
    order.push_back(next[0].payload());
    live = next;
  }
  EXPECT_EQ(order, (std::vector<std::string>{"o/a", "o/c", "o/b", "o/d"}));
  EXPECT_EQ(h.session->slow_stats().refresh_images, 3u);
}

TEST(MqttReliable, UnacknowledgedMessagesAreRedeliveredWithDupWhenTheSessionResumes) {
  ServerState broker;  // the harnesses are connections to one broker
  const Bytes expiry_60s = {5, 0x11, 0, 0, 0, 60};
  uint16_t unacked = 0, released = 0;
  {
    MqttHarness h({}, &broker);
    h.connect(expiry_60s, "redeliver");
    h.subscribe("r/#", 2);
    h.publish("r/a", "first");
    h.publish("r/b", "second");
    auto live = h.turn();
    ASSERT_EQ(live.size(), 2u);
    released = live[0].packet_id();
    unacked = live[1].packet_id();
    ASSERT_EQ(h.send(ack(kPubrec, released)).size(), 1u);  // PUBREL sent, PUBCOMP not yet
    h.session->finish();
  }
  MqttHarness back({}, &broker);
  bool present = false;
  auto again = back.connect(expiry_60s, "redeliver", 0x00, &present);
  EXPECT_TRUE(present);
  ASSERT_GE(again.size(), 2u);
  EXPECT_EQ(again[0].first, kPubrel);  // in the original order [MQTT-4.4.0-1]
  EXPECT_EQ(again[0].body, (Bytes{static_cast<uint8_t>(released >> 8), static_cast<uint8_t>(released)}));
  EXPECT_EQ(again[1].first, 0x3C);  // PUBLISH, DUP, QoS 2
  EXPECT_EQ(again[1].packet_id(), unacked);
  EXPECT_EQ(again[1].payload(), "second");
  EXPECT_TRUE(back.send(ack(kPubcomp, released)).empty());
  EXPECT_EQ(back.send(ack(kPubrec, unacked)).size(), 1u);
  EXPECT_FALSE(back.session->closing());
  back.session->finish();
}

}  // namespace
}  // namespace tw::mqtt

namespace tw::mqtt {
namespace {

using namespace testing;

// The properties of a received MQTT 5 PUBLISH at QoS 0: the bytes of its property block.
Bytes properties_of(const Received& m) {
  const size_t at = m.topic_end();
  return Bytes(m.body.begin() + static_cast<long>(at) + 1, m.body.begin() + static_cast<long>(at + 1 + m.body[at]));
}

TEST(MqttOwnPublish, TheBrokerAssignsTopicAliasesUpToTheClientsMaximum) {
  MqttHarness h;
  h.connect({3, 0x22, 0, 1});  // Topic Alias Maximum 1
  h.subscribe("t/#");
  h.publish("t/a", "1");
  h.publish("t/a", "2");
  h.publish("t/b", "3");
  auto got = h.turn();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].topic(), "t/a");  // sets alias 1
  EXPECT_EQ(properties_of(got[0]), (Bytes{0x23, 0, 1}));
  EXPECT_EQ(got[1].topic(), "");  // uses it
  EXPECT_EQ(properties_of(got[1]), (Bytes{0x23, 0, 1}));
  EXPECT_EQ(got[1].payload(), "2");
  EXPECT_EQ(got[2].topic(), "t/b");  // no alias left: the topic in full
  EXPECT_TRUE(properties_of(got[2]).empty());
}

TEST(MqttOwnPublish, Qos1MessagesUseTheTopicAliasAndAreResentWithTheirTopic) {
  ServerState broker;  // the harnesses are connections to one broker
  const Bytes props = {8, 0x11, 0, 0, 0, 60, 0x22, 0, 1};  // Session Expiry 60 s, Topic Alias Maximum 1
  auto props_of = [](const Received& m) {  // after the packet id
    const size_t at = m.topic_end() + 2;
    return Bytes(m.body.begin() + static_cast<long>(at) + 1, m.body.begin() + static_cast<long>(at + 1 + m.body[at]));
  };
  uint16_t unacked = 0;
  {
    MqttHarness h({}, &broker);
    h.connect(props, "alias");
    h.subscribe("t/#", 1);
    h.publish("t/a", "1");
    h.publish("t/a", "2");
    auto live = h.turn();
    ASSERT_EQ(live.size(), 2u);
    EXPECT_EQ(live[0].qos(), 1);
    EXPECT_EQ(live[0].topic(), "t/a");  // sets alias 1
    EXPECT_EQ(props_of(live[0]), (Bytes{0x23, 0, 1}));
    EXPECT_EQ(live[1].qos(), 1);
    EXPECT_EQ(live[1].topic(), "");  // uses it
    EXPECT_EQ(props_of(live[1]), (Bytes{0x23, 0, 1}));
    EXPECT_EQ(live[1].payload(), "2");
    h.send(ack(kPuback, live[0].packet_id()));
    unacked = live[1].packet_id();
    h.session->finish();
  }
  // A new connection knows no alias [MQTT-3.3.2-7]: the message is resent with its topic.
  MqttHarness back({}, &broker);
  auto again = back.connect(props, "alias", 0x00);
  auto resent = std::find_if(again.begin(), again.end(), [](const Received& m) { return m.first == 0x3A; });
  ASSERT_NE(resent, again.end());  // PUBLISH, DUP, QoS 1
  EXPECT_EQ(resent->packet_id(), unacked);
  EXPECT_EQ(resent->topic(), "t/a");
  EXPECT_TRUE(props_of(*resent).empty());
  EXPECT_EQ(resent->payload(), "2");
  back.session->finish();
}

TEST(MqttOwnPublish, APublishCarriesTheIdentifiersOfTheSubscriptionsThatDeliverIt) {
  MqttHarness h;
  h.connect();
  h.publish("i/a", "old");
  // SUBSCRIBE with Subscription Identifier 5, then 300 (a two-byte varint).
  auto retained = h.send(packet(0x82, cat({{0, 1, 2, 0x0B, 5}, str("i/#"), {0}})));
  ASSERT_EQ(retained.size(), 2u);
  EXPECT_EQ(retained[1].first, 0x31);
  EXPECT_EQ(properties_of(retained[1]), (Bytes{0x0B, 5}));
  h.send(packet(0x82, cat({{0, 2, 3, 0x0B, 0xAC, 0x02}, str("i/a"), {2}})));
  h.publish("i/a", "new");
  auto got = h.turn();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].qos(), 2);  // the highest granted QoS of the two
  EXPECT_EQ(got[0].payload(), "new");
  const size_t props_at = got[0].topic_end() + 2;
  EXPECT_EQ(Bytes(got[0].body.begin() + static_cast<long>(props_at), got[0].body.begin() + static_cast<long>(props_at) + 6),
            (Bytes{5, 0x0B, 5, 0x0B, 0xAC, 0x02}));
}

}  // namespace
}  // namespace tw::mqtt
