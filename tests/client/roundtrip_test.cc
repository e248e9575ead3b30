// Client <-> real broker round trips: publish/subscribe, snapshot,
// unsubscribe, the dispatch rule.
#include "test_broker.h"

namespace tw::client::testing {
namespace {

constexpr uint16_t kBid = 22;
constexpr uint16_t kAsk = 25;

class RoundTrip : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pub.connect(options_for(broker.port(), "pub")).ok());
    ASSERT_TRUE(sub.connect(options_for(broker.port(), "sub")).ok());
  }
  TestBroker broker;
  Client pub;
  Client sub;
  std::vector<Received> got;
};

TEST_F(RoundTrip, ImageThenUpdatesInSequence) {
  auto id = pub.advertise("T/EQ/A", wire::PayloadKind::FieldList);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, 1u);
  ASSERT_TRUE(pub.publish(*id, decimal_field(kBid, 125, -2), true).ok());
  confirm_published(pub, "T/EQ/A");

  ASSERT_TRUE(sub.subscribe("T/EQ/>", recorder(got)).ok());
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 1; }));
  EXPECT_EQ(got[0].kind, MessageKind::Image);
  EXPECT_EQ(got[0].topic, "T/EQ/A");
  EXPECT_EQ(got[0].seq, 1u);
  EXPECT_EQ(got[0].payload, decimal_field(kBid, 125, -2));

  ASSERT_TRUE(pub.publish(*id, decimal_field(kBid, 126, -2)).ok());
  ASSERT_TRUE(pub.publish(*id, decimal_field(kAsk, 127, -2)).ok());
  ASSERT_TRUE(pub.flush().ok());
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 3; }));
  EXPECT_EQ(got[1].kind, MessageKind::Update);
  EXPECT_EQ(got[1].seq, 2u);
  EXPECT_EQ(got[2].seq, 3u);
  EXPECT_FALSE(got[1].gap || got[2].gap);
  EXPECT_EQ(got[2].payload, decimal_field(kAsk, 127, -2));
  EXPECT_EQ(got[1].channel_id, got[0].channel_id);
  EXPECT_EQ(sub.counters().gaps, 0u);
  EXPECT_EQ(sub.counters().messages, 3u);
  EXPECT_EQ(pub.counters().published, 3u);
}

TEST_F(RoundTrip, ConveniencePublishAdvertisesOnFirstUse) {
  ASSERT_TRUE(sub.subscribe("T/>", recorder(got)).ok());
  sub.poll(0);
  std::vector<uint8_t> hello{'h', 'i'};
  ASSERT_TRUE(pub.publish("T/TXT", hello, false, wire::PayloadKind::Opaque).ok());
  ASSERT_TRUE(pub.publish("T/TXT", hello, false, wire::PayloadKind::Opaque).ok());
  EXPECT_EQ(*pub.advertise("T/TXT", wire::PayloadKind::Opaque), 1u) << "one REGISTER per topic";
  EXPECT_FALSE(pub.advertise("T/TXT", wire::PayloadKind::FieldList).ok());
  ASSERT_TRUE(pub.flush().ok());
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 2; }));
  EXPECT_EQ(got.back().topic, "T/TXT");
  EXPECT_EQ(got.back().payload, hello);
}

TEST_F(RoundTrip, SnapshotReturnsMergedImageOutsideTheStream) {
  auto id = pub.advertise("T/S/A", wire::PayloadKind::FieldList);
  ASSERT_TRUE(pub.publish(*id, decimal_field(kBid, 1, 0), true).ok());
  ASSERT_TRUE(pub.publish(*id, decimal_field(kAsk, 2, 0)).ok());
  confirm_published(pub, "T/S/A");

  ASSERT_TRUE(sub.subscribe("T/S/A", recorder(got)).ok());
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 1; }));
  auto snap = sub.snapshot("T/S/A", 10'000);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  ASSERT_TRUE(snap->found);
  EXPECT_EQ(snap->topic, "T/S/A");
  EXPECT_EQ(snap->seq, 2u);
  std::vector<uint16_t> ids;
  fields::for_each(snap->payload, [&](uint16_t fid, const fields::FieldValue&) { ids.push_back(fid); });
  EXPECT_EQ(ids, (std::vector<uint16_t>{kBid, kAsk}));
  EXPECT_EQ(got.size(), 1u) << "a snapshot image is not delivered to subscription handlers";
}

TEST_F(RoundTrip, SnapshotOfUnknownTopicIsNotFound) {
  auto snap = sub.snapshot("T/NOPE", 10'000);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_FALSE(snap->found);
  EXPECT_FALSE(sub.snapshot("T/*", 10'000).ok()) << "patterns are not topics";
}

TEST_F(RoundTrip, UnsubscribeStopsDelivery) {
  auto id = pub.advertise("T/U/A", wire::PayloadKind::FieldList);
  ASSERT_TRUE(pub.publish(*id, decimal_field(kBid, 1, 0), true).ok());
  confirm_published(pub, "T/U/A");
  ASSERT_TRUE(sub.subscribe("T/U/>", recorder(got)).ok());
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 1; }));

  ASSERT_TRUE(sub.unsubscribe("T/U/>").ok());
  EXPECT_FALSE(sub.unsubscribe("T/U/>").ok());
  EXPECT_EQ(sub.subscription_count(), 0u);
  // The unsubscribe reaches the broker before this snapshot, which is answered
  // after any update the broker would still have sent us.
  ASSERT_TRUE(sub.snapshot("T/U/A", 10'000).ok());
  ASSERT_TRUE(pub.publish(*id, decimal_field(kBid, 2, 0)).ok());
  confirm_published(pub, "T/U/A");
  ASSERT_TRUE(sub.snapshot("T/U/A", 10'000).ok());
  EXPECT_EQ(got.size(), 1u);
  EXPECT_EQ(sub.counters().updates, 0u);
}

TEST_F(RoundTrip, OldestMatchingSubscriptionGetsEachMessageOnce) {
  std::vector<Received> specific;
  auto wide = sub.subscribe("T/D/>", recorder(got));
  auto narrow = sub.subscribe("T/D/A", recorder(specific));
  ASSERT_TRUE(wide.ok() && narrow.ok());
  sub.poll(0);
  auto id = pub.advertise("T/D/A", wire::PayloadKind::FieldList);
  ASSERT_TRUE(pub.publish(*id, decimal_field(kBid, 1, 0), true).ok());
  confirm_published(pub, "T/D/A");
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 1; }));
  ASSERT_TRUE(sub.snapshot("T/D/A", 10'000).ok());
  EXPECT_EQ(got[0].subscription_id, *wide);
  EXPECT_TRUE(specific.empty());

  ASSERT_TRUE(sub.unsubscribe("T/D/>").ok());
  ASSERT_TRUE(sub.snapshot("T/D/A", 10'000).ok());  // the unsubscribe is processed
  ASSERT_TRUE(pub.publish(*id, decimal_field(kBid, 2, 0)).ok());
  ASSERT_TRUE(pub.flush().ok());
  ASSERT_TRUE(poll_until(sub, [&] { return specific.size() == 1; }));
  EXPECT_EQ(specific[0].subscription_id, *narrow);
  EXPECT_EQ(specific[0].seq, 2u);
  EXPECT_EQ(got.size(), 1u);
}

TEST_F(RoundTrip, HandlersMayUnsubscribeThemselves) {
  auto id = pub.advertise("T/H/A", wire::PayloadKind::FieldList);
  ASSERT_TRUE(pub.publish(*id, decimal_field(kBid, 1, 0), true).ok());
  confirm_published(pub, "T/H/A");
  int calls = 0;
  ASSERT_TRUE(sub.subscribe("T/H/A", [&](const Message&) {
                   ++calls;
                   EXPECT_TRUE(sub.unsubscribe("T/H/A").ok());
                   EXPECT_EQ(sub.poll(0), -1) << "poll is not re-entrant";
                 }).ok());
  ASSERT_TRUE(poll_until(sub, [&] { return calls == 1; }));
  EXPECT_EQ(sub.subscription_count(), 0u);
}

TEST_F(RoundTrip, InvalidNamesAreRefusedLocally) {
  EXPECT_FALSE(sub.subscribe("A/>/B", [](const Message&) {}).ok());
  EXPECT_FALSE(sub.subscribe("A", nullptr).ok());
  EXPECT_FALSE(pub.advertise("A/*", wire::PayloadKind::FieldList).ok());
  EXPECT_FALSE(pub.publish(PublisherId{99}, decimal_field(kBid, 1, 0)).ok());
  EXPECT_TRUE(pub.connected()) << "local refusals do not touch the connection";
}

TEST(Connect, FailsCleanlyWithoutABroker) {
  uint16_t port = 0;
  {
    TestBroker gone;
    port = gone.port();
  }
  Client c;
  Options o = options_for(port, "nobody");
  o.connect_timeout_ms = 2000;
  EXPECT_FALSE(c.connect(o).ok());
  EXPECT_FALSE(c.connected());
  EXPECT_EQ(c.poll(0), -1);
  EXPECT_TRUE(c.unreachable()) << "nothing listens: worth trying again later";
  o.protocol_version = 0;
  EXPECT_FALSE(c.connect(o).ok());
  EXPECT_FALSE(c.unreachable()) << "refused before trying: trying again cannot help";
}

// A broker that refuses the client was reached: not a reason to try again.
TEST(Connect, ARefusedConnectionIsNotUnreachable) {
  config::BrokerConfig config;
  config.limits.max_connections = 1;
  TestBroker broker(config, 0);
  Client first, second;
  ASSERT_TRUE(first.connect(options_for(broker.port(), "first")).ok());
  Options o = options_for(broker.port(), "second");
  o.reconnect = false;
  EXPECT_FALSE(second.connect(o).ok()) << "past max_connections";
  EXPECT_FALSE(second.unreachable());
}

TEST(Connect, ReportsTheServerFromWelcome) {
  TestBroker broker;
  Client c;
  int connected_events = 0;
  c.on_connection([&](ConnectionEvent e, std::string_view) { connected_events += e == ConnectionEvent::Connected; });
  ASSERT_TRUE(c.connect(options_for(broker.port(), "w")).ok());
  EXPECT_EQ(connected_events, 1);
  EXPECT_EQ(c.server().version, wire::kProtocolVersion);
  EXPECT_GT(c.server().max_frame, 0u);
  EXPECT_FALSE(c.connect(options_for(broker.port(), "w")).ok()) << "already connected";
}

// Version 3: WELCOME carries the limits a client needs at run time.
TEST(Connect, ExposesTheLimitsOfAVersionThreeWelcome) {
  config::BrokerConfig config;
  config.limits.max_registrations = 321;
  config.limits.max_channels = 6543;
  config.limits.max_channels_per_connection = 98;
  config.limits.max_topic_length = 120;
  config.limits.max_topic_depth = 9;
  config.idle_timeout_ms = 25'000;
  TestBroker broker(config, 0);
  Client c;
  ASSERT_TRUE(c.connect(options_for(broker.port(), "limits")).ok());
  EXPECT_EQ(c.server().version, wire::kProtocolVersion);  // 3 and later announce the limits
  EXPECT_EQ(c.server().limits.max_registrations, 321u);
  EXPECT_EQ(c.server().limits.max_channels, 6543u);
  EXPECT_EQ(c.server().limits.max_channels_per_connection, 98u);
  EXPECT_EQ(c.server().limits.max_topic_length, 120u);
  EXPECT_EQ(c.server().limits.max_topic_depth, 9u);
  EXPECT_EQ(c.server().limits.idle_timeout_ms, 25'000u);
}

// A client limited to version 2 reads the old layout and knows no limits.
TEST(Connect, AVersionTwoClientGetsTheOldWelcome) {
  config::BrokerConfig config;
  config.limits.max_registrations = 321;
  TestBroker broker(config, 0);
  Client c;
  Options o = options_for(broker.port(), "old");
  o.protocol_version = 2;
  ASSERT_TRUE(c.connect(o).ok());
  EXPECT_EQ(c.server().version, 2);
  EXPECT_EQ(c.server().limits.max_registrations, 0u) << "not announced before version 3";
  EXPECT_GT(c.server().max_frame, 0u);
  o.protocol_version = 0;
  Client bad;
  EXPECT_FALSE(bad.connect(o).ok()) << "version 0 does not exist";
}

}  // namespace
}  // namespace tw::client::testing
