// A real MqttSession on one end of a socketpair, with the real router and
// fanout: the test writes packets as the client and reads what the broker
// answers. What the interoperability test (it21) cannot reach with stock
// clients: '$' topics and wildcards, topic aliases, the Receive Maximum,
// the client's Maximum Packet Size, Retain Handling 2.
#include <gtest/gtest.h>

#include <algorithm>

#include "base/clock.h"
#include "mqtt/harness.h"

namespace tw::mqtt {
namespace {

using namespace testing;

TEST(MqttSession, FirstLevelWildcardsDoNotReachDollarTopics) {
  MqttHarness h;
  h.connect();
  h.publish("$SYS/load", "1");
  h.publish("a/b", "2");
  auto retained = h.subscribe("#");
  ASSERT_EQ(retained.size(), 1u);
  EXPECT_EQ(retained[0].first, 0x31);  // RETAIN: it predates the subscription
  EXPECT_EQ(retained[0].topic(), "a/b");
  h.publish("$SYS/load", "3");
  EXPECT_TRUE(h.turn().empty());
  // A filter with a literal first level reaches them.
  h.subscribe("$SYS/#");
  h.publish("$SYS/load", "4");
  auto live = h.turn();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].first, 0x30);
  EXPECT_EQ(live[0].payload(), "4");

  MqttHarness fresh;
  fresh.connect();
  fresh.publish("$SYS/load", "5");
  retained = fresh.subscribe("$SYS/+");
  ASSERT_EQ(retained.size(), 1u);
  EXPECT_EQ(retained[0].payload(), "5");
}

TEST(MqttSession, HashAlsoMatchesTheParentLevel) {
  MqttHarness h;
  h.connect();
  h.publish("a", "parent");
  h.publish("a/b", "child");
  h.publish("ab", "other");
  auto retained = h.subscribe("a/#");
  ASSERT_EQ(retained.size(), 2u);
  EXPECT_NE(retained[0].topic(), "ab");
  EXPECT_NE(retained[1].topic(), "ab");
}

TEST(MqttSession, TopicAliasesResolveAndAnUnknownOneGetsDisconnect0x82AndTheRestIsDiscarded) {
  MqttHarness h;
  h.connect();
  h.subscribe("t/#");
  auto first = h.send(publish_qos0("t/a", {3, 0x23, 0, 1}, "one"));  // sets alias 1
  auto second = h.send(publish_qos0("", {3, 0x23, 0, 1}, "two"));    // uses it
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].topic(), "t/a");
  EXPECT_EQ(second[0].payload(), "two");
  auto refused = h.send(publish_qos0("", {3, 0x23, 0, 2}, "three"));  // alias 2 was never set
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].first, 0xE0);
  EXPECT_EQ(refused[0].body[0], 0x82);  // Protocol Error
  EXPECT_EQ(h.counters.protocol_errors, 1u);
  // The client may be acknowledging what it was sent meanwhile: its input is
  // read and discarded, rather than met with a reset, until the drain ends.
  EXPECT_TRUE(h.send(packet(0x40, {0, 1})).empty());
  EXPECT_TRUE(h.send(publish_qos0("t/a", {0}, "four")).empty());  // not published: no copy comes back
  h.session->on_tick(monotonic_ns() + MqttSession::kDrainNs + 1);
  EXPECT_TRUE(h.session->closing());
}

TEST(MqttSession, ARefusedQos1PublishGetsAPubackWithItsReason) {
  MqttHarness h;
  h.connect();
  auto got = h.send(packet(0x32, cat({str("a/\u2205"), {0, 7, 0}, {'x'}})));  // the empty-level marker as a level: no channel
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, 0x40);
  EXPECT_EQ(got[0].body, (Bytes{0, 7, 0x90}));
}

TEST(MqttSession, TopicAlias0IsATopicAliasInvalidDisconnect) {
  MqttHarness h;
  h.connect();
  auto got = h.send(publish_qos0("a", {3, 0x23, 0, 0}, "x"));  // [MQTT-3.3.2-8]
  EXPECT_TRUE(h.session->closing());
  h.session->finish();
  got = h.turn();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, 0xE0);
  EXPECT_EQ(got[0].body[0], 0x94);
}

TEST(MqttSession, MoreUnreleasedQos2MessagesThanReceiveMaximumGetDisconnect0x93AndTheRestIsDiscarded) {
  MqttHarness h;
  h.connect();
  for (uint16_t id = 1; id <= MqttSession::kReceiveMaximum; ++id) {
    auto got = h.send(packet(0x34, cat({str("q/2"), {static_cast<uint8_t>(id >> 8), static_cast<uint8_t>(id), 0}})));
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got[0].first, 0x50);  // PUBREC
  }
  EXPECT_FALSE(h.session->closing());
  auto got = h.send(packet(0x34, cat({str("q/2"), {0xFF, 0xFF, 0}})));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, 0xE0);
  EXPECT_EQ(got[0].body[0], 0x93);
  // The client, still answering the PUBRECs it reads, is not closed on (its
  // writes would draw a reset, and it might never read the DISCONNECT): its
  // input is discarded and nothing more is sent [MQTT-3.14.4-1].
  EXPECT_FALSE(h.session->closing());
  EXPECT_TRUE(h.send(packet(0x62, {0, 1})).empty());  // a PUBREL: no PUBCOMP
  EXPECT_TRUE(h.send(packet(0xC0, {})).empty());      // a PINGREQ: no PINGRESP
  // Closed by the time the drain ends, without a second DISCONNECT.
  h.session->on_tick(monotonic_ns() + MqttSession::kDrainNs + 1);
  ASSERT_TRUE(h.session->closing());
  h.session->finish();
  EXPECT_TRUE(h.turn().empty());
}

TEST(MqttSession, NothingLargerThanTheClientsMaximumPacketSizeIsSent) {
  MqttHarness h;
  h.connect({5, 0x27, 0, 0, 0, 20});  // Maximum Packet Size 20
  h.subscribe("m/#");
  h.publish("m/small", "ok");
  h.publish("m/large", std::string(64, 'x'));
  auto got = h.turn();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].topic(), "m/small");
}

TEST(MqttSession, RetainHandling2SendsNoRetainedMessages) {
  MqttHarness h;
  h.connect();
  h.publish("r/x", "old");
  EXPECT_TRUE(h.subscribe("r/#", 0x20).empty());
  h.publish("r/x", "new");
  auto live = h.turn();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].payload(), "new");
}

// In a tiered broker a subscription's retained images may come after the
// SUBSCRIBE was handled (send_prior_image): the same rule applies then.
TEST(MqttSession, RetainHandling2SendsNoRetainedMessageThatArrivesAfterTheSubscribe) {
  MqttHarness h;
  h.connect();
  h.publish("r/x", "old");
  EXPECT_TRUE(h.subscribe("r/#", 0x20).empty());
  cache::ChannelId id = 0;
  ASSERT_TRUE(h.router.advertise("r/x", wire::PayloadKind::Opaque, id).ok());
  h.session->send_prior_image(*h.router.channel(id), broker::SlowPolicy::Conflate);  // as an access point's mirror does
  EXPECT_TRUE(h.turn().empty());
  // With a subscription that wants it covering the channel too, it comes.
  h.subscribe("r/x");  // (the connection holds the channel already: no image now)
  h.session->send_prior_image(*h.router.channel(id), broker::SlowPolicy::Conflate);
  auto late = h.turn();
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].first, 0x31);  // RETAIN 1
  EXPECT_EQ(late[0].payload(), "old");
}

// [MQTT-3.8.4-3]: the same filter again replaces the subscription; with
// Retain Handling 0 its retained messages are sent again, with 1 they are
// not, and no live message is lost or doubled by the replacement.
TEST(MqttSession, SubscribingAgainResendsRetainedMessagesWithRetainHandling0Only) {
  MqttHarness h;
  h.connect();
  h.publish("r/x", "x1");
  h.publish("r/y", "y1");
  auto retained = [](const std::vector<Received>& got) {
    std::vector<std::string> out;
    for (const Received& r : got) out.push_back(r.topic() + "=" + r.payload() + ((r.first & 1) ? " retained" : ""));
    std::sort(out.begin(), out.end());
    return out;
  };
  const std::vector<std::string> both{"r/x=x1 retained", "r/y=y1 retained"};
  EXPECT_EQ(retained(h.subscribe("r/#")), both);
  EXPECT_EQ(retained(h.subscribe("r/#")), both) << "Retain Handling 0 again";
  EXPECT_TRUE(h.subscribe("r/#", 0x10).empty()) << "Retain Handling 1: the subscription exists";
  h.publish("r/x", "x2");
  EXPECT_EQ(retained(h.turn()), std::vector<std::string>{"r/x=x2"}) << "one live message, not retained";
  EXPECT_EQ(retained(h.subscribe("r/#", 0x00)), (std::vector<std::string>{"r/x=x2 retained", "r/y=y1 retained"}));
}

// [MQTT-3.3.1-12]: RETAIN 0 neither stores nor replaces the retained message;
// a zero-byte retained one clears it; any other publisher's message (market
// data) is the retained message again (docs/mqtt.md, "Retained messages").
TEST(MqttSession, ARetain0PublishNeitherStoresNorReplacesTheRetainedMessage) {
  MqttHarness h;
  h.connect();
  auto retained = [&] {
    h.turn();  // the live messages
    std::vector<std::string> out;
    for (const Received& r : h.subscribe("r/#")) out.push_back(r.topic() + "=" + r.payload());
    std::sort(out.begin(), out.end());
    return out;
  };
  h.publish_mqtt("r/a", "a1", true);
  h.publish_mqtt("r/a", "a2", false);
  h.publish_mqtt("r/b", "b1", false);
  EXPECT_EQ(retained(), std::vector<std::string>{"r/a=a1"});
  h.publish_mqtt("r/a", "a3", false);
  EXPECT_EQ(retained(), std::vector<std::string>{"r/a=a1"}) << "set aside once, kept";
  h.publish("r/b", "b2");
  EXPECT_EQ(retained(), (std::vector<std::string>{"r/a=a1", "r/b=b2"})) << "market data: the last value";
  h.publish_mqtt("r/a", "", true);
  h.publish_mqtt("r/a", "a4", false);
  EXPECT_EQ(retained(), std::vector<std::string>{"r/b=b2"}) << "cleared, and RETAIN 0 does not refill it";
}

TEST(MqttSession, AFilterTheBrokerCannotExpressIsRefusedInTheSuback) {
  MqttHarness h;
  h.connect();
  auto got = h.send(packet(0x82, cat({{0, 1, 0}, str("a/\u2205"), {0}, str("$share/g+/a"), {0}, str("$share/g/"), {0},
                                      str("ok/+"), {0}})));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].body, (Bytes{0, 1, 0, 0x8F, 0x8F, 0x8F, 0x00}));
}

TEST(MqttSession, KeepAliveTimesOutAtOneAndAHalfTimesWithDisconnect0x8D) {
  MqttHarness h;
  h.connect();  // Keep Alive 30 s
  constexpr uint64_t kS = 1'000'000'000;
  const uint64_t start = monotonic_ns();
  h.session->on_tick(start + 44 * kS);
  EXPECT_FALSE(h.session->closing());
  h.session->on_tick(start + 46 * kS);
  ASSERT_TRUE(h.session->closing());
  h.session->finish();
  auto got = h.turn();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, 0xE0);
  EXPECT_EQ(got[0].body[0], 0x8D);
}

TEST(MqttSession, ASessionWithAnExpiryIsResumedWithItsSubscriptionsAndRetainedImages) {
  ServerState broker;  // the harnesses are connections to one broker
  const Bytes expiry_60s = {5, 0x11, 0, 0, 0, 60};
  {
    MqttHarness h({}, &broker);
    h.connect(expiry_60s, "resume");
    h.subscribe("s/#");
    h.publish("s/x", "while connected");
    h.session->finish();  // the connection ends; the session is kept
  }
  MqttHarness back({}, &broker);
  // Each harness has a router of its own, so s/x's numbering starts again
  // here: two messages while away make its number differ from the one the
  // session saw (1), as any message would on one broker.
  back.publish("s/x", "earlier while away");
  back.publish("s/x", "while away");
  bool present = false;
  auto images = back.connect(expiry_60s, "resume", 0x00, &present);  // Clean Start 0
  EXPECT_TRUE(present);
  ASSERT_EQ(images.size(), 1u);  // the subscription came back, with the channel's latest value
  EXPECT_EQ(images[0].first, 0x31);
  EXPECT_EQ(images[0].payload(), "while away");
  back.publish("s/x", "live");
  ASSERT_EQ(back.turn().size(), 1u);
  back.session->finish();

  MqttHarness fresh({}, &broker);
  fresh.connect(expiry_60s, "resume", 0x02, &present);  // Clean Start discards it
  EXPECT_FALSE(present);
  fresh.publish("s/x", "not subscribed");
  EXPECT_TRUE(fresh.turn().empty());
}

TEST(MqttSession, AnIdleConnectionIsNotVisitedEveryTick) {
  MqttHarness h;
  h.connect();
  const uint64_t now = monotonic_ns();
  h.session->on_tick(now);
  EXPECT_GT(h.session->tick_due_ns(), now);  // not 0: the loop's tick skips it until then
  EXPECT_LE(h.session->tick_due_ns(), now + MqttSession::kTakeoverPollNs);
}

// No MQTT state is process-wide (mqtt/server_state.h): a client id in use at one broker is free at another.
TEST(MqttSession, TwoBrokersInOneProcessShareNoClientIds) {
  MqttHarness at_one, at_other;  // each with its own ServerState
  at_one.connect({0}, "same");
  at_other.connect({0}, "same");
  const uint64_t now = monotonic_ns();
  at_one.session->on_tick(now);
  at_other.session->on_tick(now);
  EXPECT_FALSE(at_one.session->closing());
  EXPECT_FALSE(at_other.session->closing());
}

TEST(MqttSession, ANewConnectionWithTheSameClientIdTakesOver) {
  ServerState broker;  // the harnesses are connections to one broker
  MqttHarness first({}, &broker);
  MqttHarness second({}, &broker);
  MqttHarness other({}, &broker);
  first.connect({0}, "same");
  other.connect({0}, "different");
  second.connect({0}, "same");
  const uint64_t now = monotonic_ns();
  other.session->on_tick(now);
  second.session->on_tick(now);
  EXPECT_FALSE(other.session->closing());
  EXPECT_FALSE(second.session->closing());
  first.session->on_tick(now);  // [MQTT-3.1.4-2]: the older one goes, with DISCONNECT 0x8E
  ASSERT_TRUE(first.session->closing());
  first.session->finish();
  auto got = first.turn();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, 0xE0);
  EXPECT_EQ(got[0].body[0], 0x8E);
}

}  // namespace
}  // namespace tw::mqtt
