// Slow-consumer policy plumbing in the router: each subscriber entry carries
// the policy of the subscription that added it, the strictest when several
// patterns of one outlet cover a channel, and passes it with every image and
// delivery (the session applies it; tests/broker/session_slow_test.cc).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "output/fanout.h"
#include "broker/payloads.h"
#include "broker/recording_outlet.h"
#include "broker/router.h"
#include "tickwire/fields/field_list.h"

namespace tw::broker {
namespace {

std::vector<uint8_t> quote(int64_t bid) { return int_field(22, bid); }

class RouterPolicyTest : public ::testing::Test {
 protected:
  cache::ChannelId advertise(Router& r, const std::string& topic) {
    cache::ChannelId id = 0;
    EXPECT_TRUE(r.advertise(topic, wire::PayloadKind::FieldList, id).ok());
    return id;
  }
  void publish(Router& r, cache::ChannelId id, int64_t bid) { ASSERT_TRUE(r.publish(id, quote(bid), false).ok()); }
  SlowPolicy last_update_policy(const RecordingOutlet& o) {
    const Event* e = o.last("update");
    return e ? e->policy : SlowPolicy::Default;
  }

  output::Fanout fanout{1 << 20};
  Router router{RouterLimits{}, fanout};
  RecordingOutlet a{fanout, "a"}, b{fanout, "b"};
};

TEST_F(RouterPolicyTest, DefaultResolvesToTheRoutersDefault) {
  auto ibm = advertise(router, "NYSE/EQ/IBM");
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>").ok());
  publish(router, ibm, 1);
  EXPECT_EQ(last_update_policy(a), SlowPolicy::Default);  // the first message is the image
  ASSERT_EQ(a.events.size(), 1u);
  publish(router, ibm, 2);
  EXPECT_EQ(last_update_policy(a), SlowPolicy::Conflate);
  EXPECT_EQ(router.policy_of(&a, ibm), SlowPolicy::Conflate);

  RouterLimits limits;
  limits.default_policy = SlowPolicy::Drop;
  Router dropping{limits, fanout};
  auto id = advertise(dropping, "X/Y");
  ASSERT_TRUE(dropping.subscribe(&b, "X/>", SlowPolicy::Default).ok());
  publish(dropping, id, 1);
  publish(dropping, id, 2);
  EXPECT_EQ(last_update_policy(b), SlowPolicy::Drop);
}

TEST_F(RouterPolicyTest, EachOutletGetsItsOwnSubscriptionsPolicy) {
  auto ibm = advertise(router, "NYSE/EQ/IBM");
  publish(router, ibm, 1);
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>", SlowPolicy::Drop).ok());
  ASSERT_TRUE(router.subscribe(&b, "NYSE/EQ/IBM", SlowPolicy::Disconnect).ok());
  ASSERT_EQ(a.events.size(), 1u);
  EXPECT_EQ(a.events[0].kind, "image");
  EXPECT_EQ(a.events[0].policy, SlowPolicy::Drop);  // the stream image carries the policy too
  EXPECT_EQ(b.events[0].policy, SlowPolicy::Disconnect);
  publish(router, ibm, 2);
  EXPECT_EQ(last_update_policy(a), SlowPolicy::Drop);
  EXPECT_EQ(last_update_policy(b), SlowPolicy::Disconnect);
}

TEST_F(RouterPolicyTest, StrictestOfOverlappingPatternsWinsAndUnsubscribingRelaxesIt) {
  auto ibm = advertise(router, "NYSE/EQ/IBM");
  auto msft = advertise(router, "NYSE/EQ/MSFT");
  publish(router, ibm, 1);
  publish(router, msft, 1);
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>", SlowPolicy::Conflate).ok());
  ASSERT_TRUE(router.subscribe(&a, "NYSE/EQ/IBM", SlowPolicy::Disconnect).ok());
  ASSERT_TRUE(router.subscribe(&a, "NYSE/*/IBM", SlowPolicy::Drop).ok());
  EXPECT_EQ(router.policy_of(&a, ibm), SlowPolicy::Disconnect);
  EXPECT_EQ(router.policy_of(&a, msft), SlowPolicy::Conflate);  // only NYSE/> covers it
  publish(router, ibm, 2);
  EXPECT_EQ(last_update_policy(a), SlowPolicy::Disconnect);
  EXPECT_EQ(a.count("update"), 1u);  // still delivered once

  ASSERT_TRUE(router.unsubscribe(&a, "NYSE/EQ/IBM").ok());
  EXPECT_EQ(router.policy_of(&a, ibm), SlowPolicy::Drop);
  publish(router, ibm, 3);
  EXPECT_EQ(last_update_policy(a), SlowPolicy::Drop);
  ASSERT_TRUE(router.unsubscribe(&a, "NYSE/*/IBM").ok());
  publish(router, ibm, 4);
  EXPECT_EQ(last_update_policy(a), SlowPolicy::Conflate);
  ASSERT_TRUE(router.unsubscribe(&a, "NYSE/>").ok());
  EXPECT_FALSE(router.delivers(&a, ibm));
  EXPECT_EQ(router.policy_of(&a, ibm), SlowPolicy::Default);
}

TEST_F(RouterPolicyTest, ResubscribingAPatternKeepsItsFirstPolicy) {
  auto ibm = advertise(router, "NYSE/EQ/IBM");
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>", SlowPolicy::Drop).ok());
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>", SlowPolicy::Disconnect).ok());
  EXPECT_EQ(router.subscription_count(&a), 1u);
  EXPECT_EQ(router.policy_of(&a, ibm), SlowPolicy::Drop);
}

TEST_F(RouterPolicyTest, ChannelsCreatedLaterTakeThePolicyOfTheMatchingPatterns) {
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>", SlowPolicy::Drop).ok());
  ASSERT_TRUE(router.subscribe(&a, "NYSE/EQ/*", SlowPolicy::Disconnect).ok());
  auto ibm = advertise(router, "NYSE/EQ/IBM");
  auto bond = advertise(router, "NYSE/BD/X");
  EXPECT_EQ(router.policy_of(&a, ibm), SlowPolicy::Disconnect);
  EXPECT_EQ(router.policy_of(&a, bond), SlowPolicy::Drop);
  publish(router, ibm, 1);  // the first message reaches the outlet as its stream image
  ASSERT_EQ(a.events.size(), 1u);
  EXPECT_EQ(a.events[0].policy, SlowPolicy::Disconnect);
}

TEST_F(RouterPolicyTest, RemovingAnOutletForgetsItsPolicies) {
  auto ibm = advertise(router, "NYSE/EQ/IBM");
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>", SlowPolicy::Disconnect).ok());
  router.remove_outlet(&a);
  EXPECT_FALSE(router.delivers(&a, ibm));
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>", SlowPolicy::Conflate).ok());
  EXPECT_EQ(router.policy_of(&a, ibm), SlowPolicy::Conflate);
}

}  // namespace
}  // namespace tw::broker
