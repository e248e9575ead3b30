// HELLO/WELCOME, version negotiation and broker heartbeats.
#include <gtest/gtest.h>

#include "integration/it_support.h"

namespace tw::it {
namespace {

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
  ASSERT_TRUE(client.send_hello("future", 0, 3, 4));
  auto code = client.wait_closed_with();
  ASSERT_TRUE(code) << "the broker did not close the connection";
  EXPECT_EQ(*code, wire::Code::UnsupportedVersion);
  EXPECT_TRUE(broker.alive());
}

TEST(It01Handshake, AVersionRangeGetsTheHighestSpoken) {
  BrokerProcess broker;
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient client;
  ASSERT_TRUE(client.connect(broker.port()));
  ASSERT_TRUE(client.send_hello("range", 0, 1, 9));
  auto reply = client.next_message();
  ASSERT_TRUE(reply);
  auto welcome = reply->as<wire::Welcome>();
  ASSERT_TRUE(welcome) << testing::describe(*reply);
  EXPECT_EQ(welcome->version, 2);
}

// Version 2 only adds authentication: a version-1 client is served as before where it is off.
TEST(It01Handshake, AVersionOneClientKeepsWorking) {
  BrokerProcess broker;
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient client;
  ASSERT_TRUE(client.connect(broker.port()));
  ASSERT_TRUE(client.send_hello("old", 0, 1, 1));
  auto reply = client.next_message();
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
