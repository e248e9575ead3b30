// HELLO/WELCOME, version negotiation and broker heartbeats.
#include <gtest/gtest.h>

#include "integration/it_support.h"

namespace tw::it {
namespace {

// Connects, sends HELLO offering versions min..max and returns the answer
// (a WELCOME for the test to check); the frame owns the bytes its views use.
std::optional<OwnedFrame> hello_offering(RawClient& client, uint16_t port, const char* name, uint16_t min,
                                         uint16_t max) {
  if (!client.connect(port) || !client.send_hello(name, 0, min, max)) return std::nullopt;
  return client.next_message();
}

TEST(It01Handshake, WelcomeCarriesTheBrokerSettings) {
  BrokerProcess broker({.args = {"--max-frame", "65536", "--max-subscriptions", "77", "--server-name", "it-broker",
                                 "--heartbeat-ms", "4000"}});
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient client;
  ASSERT_TRUE(client.connect(broker.port()));
  auto reply = client.hello("it01");
  ASSERT_TRUE(reply);
  auto welcome = reply->as<wire::Welcome>();
  ASSERT_TRUE(welcome) << testing::describe(*reply);
  EXPECT_EQ(welcome->version, wire::kProtocolVersion);
  EXPECT_EQ(welcome->heartbeat_ms, 4000u) << "a client asking 0 gets the broker's interval";
  EXPECT_EQ(welcome->max_frame, 65536u);
  EXPECT_EQ(welcome->max_subscriptions, 77u);
  EXPECT_EQ(welcome->server_name, "it-broker");
}

TEST(It01Handshake, WelcomeGrantsTheRequestedHeartbeat) {
  BrokerProcess broker;
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient client;
  ASSERT_TRUE(client.connect(broker.port()));
  auto reply = client.hello("it01", 1500);
  ASSERT_TRUE(reply);
  auto welcome = reply->as<wire::Welcome>();
  ASSERT_TRUE(welcome) << testing::describe(*reply);
  EXPECT_EQ(welcome->heartbeat_ms, 1500u);
  EXPECT_EQ(welcome->server_name, "tickwired");
}

TEST(It01Handshake, VersionMismatchIsRefusedAndClosed) {
  BrokerProcess broker;
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient client;
  ASSERT_TRUE(client.connect(broker.port()));
  ASSERT_TRUE(client.send_hello("future", 0, wire::kProtocolVersion + 1, wire::kProtocolVersion + 2));
  auto code = client.wait_closed_with();
  ASSERT_TRUE(code) << "the broker did not close the connection";
  EXPECT_EQ(*code, wire::Code::UnsupportedVersion);
  EXPECT_TRUE(broker.alive());
}

TEST(It01Handshake, AVersionRangeGetsTheHighestSpoken) {
  BrokerProcess broker;
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient client;
  auto reply = hello_offering(client, broker.port(), "range", 1, 9);
  ASSERT_TRUE(reply);
  auto welcome = reply->as<wire::Welcome>();
  ASSERT_TRUE(welcome) << testing::describe(*reply);
  EXPECT_EQ(welcome->version, wire::kProtocolVersion);
}

// Version 3 announces the limits a client needs at run time (docs/protocol.md, "Session").
TEST(It01Handshake, VersionThreeWelcomeAnnouncesTheLimits) {
  BrokerProcess broker({.args = {"--max-registrations", "123", "--max-channels", "4567",
                                 "--max-channels-per-connection", "89", "--max-topic-length", "100",
                                 "--max-topic-depth", "7", "--idle-timeout-ms", "20000", "--heartbeat-ms", "4000"}});
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient client;
  auto reply = hello_offering(client, broker.port(), "v3", 1, 3);
  ASSERT_TRUE(reply);
  auto welcome = reply->as<wire::Welcome>();
  ASSERT_TRUE(welcome) << testing::describe(*reply);
  EXPECT_EQ(welcome->version, 3);
  EXPECT_EQ(welcome->limits.max_registrations, 123u);
  EXPECT_EQ(welcome->limits.max_channels, 4567u);
  EXPECT_EQ(welcome->limits.max_channels_per_connection, 89u);
  EXPECT_EQ(welcome->limits.max_topic_length, 100u);
  EXPECT_EQ(welcome->limits.max_topic_depth, 7u);
  EXPECT_EQ(welcome->limits.idle_timeout_ms, 20000u);
  EXPECT_EQ(reply->bytes().size(), wire::kHeaderSize + 14 + 2 + 9 + wire::kWelcomeLimitsSize);
}

// The idle timeout announced is the one in force for this connection: at
// least three heartbeat intervals.
TEST(It01Handshake, AnnouncedIdleTimeoutCoversThreeHeartbeats) {
  BrokerProcess broker;
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient client;
  ASSERT_TRUE(client.connect(broker.port()));
  auto reply = client.hello("slow-beat", 10'000);
  ASSERT_TRUE(reply);
  auto welcome = reply->as<wire::Welcome>();
  ASSERT_TRUE(welcome) << testing::describe(*reply);
  EXPECT_EQ(welcome->limits.idle_timeout_ms, 30'000u) << "max(idle_timeout_ms 15,000, 3 x 10,000)";
}

// A client that knows version 2 at most keeps getting the version-2 layout, byte for byte.
TEST(It01Handshake, AVersionTwoClientGetsTheOldWelcomeLayout) {
  BrokerProcess broker({.args = {"--max-frame", "65536", "--max-subscriptions", "77", "--heartbeat-ms", "4000"}});
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient client;
  auto reply = hello_offering(client, broker.port(), "old", 1, 2);
  ASSERT_TRUE(reply);
  const std::vector<uint8_t> version_two_layout = {
      0x21, 0x00, 0x00, 0x00, 0x81, 0x00, 0x00, 0x00,  // length 33, WELCOME
      0x02, 0x00, 0xa0, 0x0f, 0x00, 0x00,              // version 2, heartbeat 4,000 ms
      0x00, 0x00, 0x01, 0x00, 0x4d, 0x00, 0x00, 0x00,  // max_frame 65,536, max_subscriptions 77
      0x09, 0x00, 't', 'i', 'c', 'k', 'w', 'i', 'r', 'e', 'd'};
  EXPECT_EQ(reply->bytes(), version_two_layout);
  auto ack = client.subscribe(1, "OLD/>");
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->code, wire::Code::Ok);
}

// Version 2 only adds authentication: a version-1 client is served as before where it is off.
TEST(It01Handshake, AVersionOneClientKeepsWorking) {
  BrokerProcess broker;
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient client;
  auto reply = hello_offering(client, broker.port(), "old", 1, 1);
  ASSERT_TRUE(reply);
  auto welcome = reply->as<wire::Welcome>();
  ASSERT_TRUE(welcome) << testing::describe(*reply);
  EXPECT_EQ(welcome->version, 1);
  auto ack = client.subscribe(1, "OLD/>");
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->code, wire::Code::Ok);
}

TEST(It01Handshake, IdleConnectionReceivesHeartbeats) {
  BrokerProcess broker;
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient client;
  ASSERT_TRUE(client.connect(broker.port()));
  auto reply = client.hello("idle", 200);
  ASSERT_TRUE(reply && reply->type() == wire::MsgType::Welcome);
  // Several heartbeats in a row, answering each so the broker sees us alive.
  for (int i = 0; i < 3; ++i) {
    auto beat = client.next(5000);
    ASSERT_TRUE(beat) << "no heartbeat #" << i;
    EXPECT_EQ(beat->type(), wire::MsgType::Heartbeat) << testing::describe(*beat);
    EXPECT_EQ(beat->bytes().size(), wire::kHeaderSize);
    ASSERT_TRUE(client.send_heartbeat());
  }
}

TEST(It01Handshake, SecondHelloIsAProtocolError) {
  BrokerProcess broker;
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient client;
  ASSERT_TRUE(client.connect(broker.port()));
  ASSERT_TRUE(client.hello("twice"));
  ASSERT_TRUE(client.send_hello("twice"));
  auto code = client.wait_closed_with();
  ASSERT_TRUE(code);
  EXPECT_NE(*code, wire::Code::Ok);
}

}  // namespace
}  // namespace tw::it
