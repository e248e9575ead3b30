// Shared subscriptions ($share/GROUP/filter, src/mqtt/shared_groups.h):
// each channel's messages reach one member of the group, every member gets
// some, a member that leaves hands its channels to the others, and no
// retained messages are sent to a shared subscription.
#include <gtest/gtest.h>

#include <map>

#include "mqtt/harness.h"

namespace tw::mqtt {
namespace {

using namespace testing;

TEST(MqttShared, EachChannelReachesOneMemberAndEveryMemberGetsSome) {
  ServerState broker;  // the harnesses are connections to one broker
  MqttHarness a({}, &broker);
  MqttHarness b({}, &broker);
  a.connect({0}, "a");
  b.connect({0}, "b");
  a.publish("s/retained", "old");
  EXPECT_TRUE(a.subscribe("$share/g/s/#").empty());  // no retained messages for a shared subscription
  EXPECT_TRUE(b.subscribe("$share/g/s/#").empty());
  // Both members' channels, each published on both routers (one per harness): a
  // member keeps the channels that hash to it, whatever router fans them out.
  std::map<std::string, int> owners;
  for (int i = 0; i < 20; ++i) {
    const std::string topic = "s/" + std::to_string(i);
    a.publish(topic, "x");
    b.publish(topic, "x");
    for (const auto& m : a.turn()) owners[m.topic()] += 1;
    for (const auto& m : b.turn()) owners[m.topic()] += 10;
  }
  int at_a = 0, at_b = 0;
  for (const auto& [topic, who] : owners) {
    EXPECT_TRUE(who == 1 || who == 10) << topic;  // exactly one member
    at_a += who == 1;
    at_b += who == 10;
  }
  EXPECT_EQ(owners.size(), 20u);
  EXPECT_GT(at_a, 0);
  EXPECT_GT(at_b, 0);
  // b leaves: a takes every channel.
  b.send(packet(0xA2, cat({{0, 2, 0}, str("$share/g/s/#")})));
  for (int i = 0; i < 20; ++i) a.publish("s/" + std::to_string(i), "y");
  EXPECT_EQ(a.turn().size(), 20u);
}

TEST(MqttShared, NoLocalOnASharedSubscriptionIsAProtocolError) {
  MqttHarness h;
  h.connect();
  h.send(packet(0x82, cat({{0, 1, 0}, str("$share/g/x"), {0x04}})));
  EXPECT_TRUE(h.session->closing());
}

}  // namespace
}  // namespace tw::mqtt
