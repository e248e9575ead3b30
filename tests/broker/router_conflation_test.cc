// Conflation plumbing in the router: each subscriber entry records the
// smallest conflation interval among the outlet's patterns that cover the
// channel, real time (0) when any of them is real time, and passes it with
// every delivery (the session applies it; tests/broker/session_conflation_test.cc).
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

class RouterConflationTest : public ::testing::Test {
 protected:
  cache::ChannelId advertise(const std::string& topic) {
    cache::ChannelId id = 0;
    EXPECT_TRUE(router.advertise(topic, wire::PayloadKind::FieldList, id).ok());
    return id;
  }
  void publish(cache::ChannelId id, int64_t bid) { ASSERT_TRUE(router.publish(id, quote(bid), false).ok()); }
  // The interval the last delivery to the outlet carried (publishes twice: the first may be its image).
  uint32_t delivered_interval(RecordingOutlet& o, cache::ChannelId id) {
    publish(id, 1);
    publish(id, 2);
    const Event* e = o.last("update");
    EXPECT_NE(e, nullptr);
    return e ? e->conflate_ms : 12345;
  }

  output::Fanout fanout{1 << 20};
  Router router{RouterLimits{}, fanout};
  RecordingOutlet a{fanout, "a"}, b{fanout, "b"};
};

TEST_F(RouterConflationTest, TheSubscriptionsIntervalIsRecordedAndDelivered) {
  auto ibm = advertise("NYSE/EQ/IBM");
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>", SlowPolicy::Default, 200).ok());
  ASSERT_TRUE(router.subscribe(&b, "NYSE/EQ/IBM").ok());
  EXPECT_EQ(router.conflate_ms_of(&a, ibm), 200u);
  EXPECT_EQ(router.conflate_ms_of(&b, ibm), 0u);
  EXPECT_EQ(delivered_interval(a, ibm), 200u);
  EXPECT_EQ(b.last("update")->conflate_ms, 0u);
}

TEST_F(RouterConflationTest, ChannelsCreatedLaterGetThePatternsInterval) {
  ASSERT_TRUE(router.subscribe(&a, "FX/>", SlowPolicy::Drop, 75).ok());
  auto eur = advertise("FX/EURUSD");
  EXPECT_EQ(router.conflate_ms_of(&a, eur), 75u);
  EXPECT_EQ(router.policy_of(&a, eur), SlowPolicy::Drop);
  EXPECT_EQ(delivered_interval(a, eur), 75u);
}

TEST_F(RouterConflationTest, TheSmallestIntervalOfOverlappingPatternsApplies) {
  auto ibm = advertise("NYSE/EQ/IBM");
  auto msft = advertise("NYSE/EQ/MSFT");
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>", SlowPolicy::Default, 500).ok());
  ASSERT_TRUE(router.subscribe(&a, "NYSE/EQ/IBM", SlowPolicy::Default, 100).ok());
  ASSERT_TRUE(router.subscribe(&a, "NYSE/*/IBM", SlowPolicy::Default, 300).ok());
  EXPECT_EQ(router.conflate_ms_of(&a, ibm), 100u);
  EXPECT_EQ(router.conflate_ms_of(&a, msft), 500u);
  EXPECT_EQ(delivered_interval(a, ibm), 100u);
  // Dropping the smallest recomputes from the patterns that remain.
  ASSERT_TRUE(router.unsubscribe(&a, "NYSE/EQ/IBM").ok());
  EXPECT_EQ(router.conflate_ms_of(&a, ibm), 300u);
  ASSERT_TRUE(router.unsubscribe(&a, "NYSE/*/IBM").ok());
  EXPECT_EQ(router.conflate_ms_of(&a, ibm), 500u);
  EXPECT_TRUE(router.delivers(&a, ibm));
}

TEST_F(RouterConflationTest, RealTimeWinsOverConflation) {
  auto ibm = advertise("NYSE/EQ/IBM");
  auto msft = advertise("NYSE/EQ/MSFT");
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>", SlowPolicy::Default, 200).ok());
  ASSERT_TRUE(router.subscribe(&a, "NYSE/EQ/IBM").ok());  // real time
  EXPECT_EQ(router.conflate_ms_of(&a, ibm), 0u);
  EXPECT_EQ(router.conflate_ms_of(&a, msft), 200u);
  EXPECT_EQ(delivered_interval(a, ibm), 0u);
  EXPECT_EQ(delivered_interval(a, msft), 200u);
  // Without the real-time pattern the channel is conflated again.
  ASSERT_TRUE(router.unsubscribe(&a, "NYSE/EQ/IBM").ok());
  EXPECT_EQ(router.conflate_ms_of(&a, ibm), 200u);
  EXPECT_EQ(delivered_interval(a, ibm), 200u);
}

TEST_F(RouterConflationTest, ResubscribingAHeldPatternKeepsItsInterval) {
  auto ibm = advertise("NYSE/EQ/IBM");
  ASSERT_TRUE(router.subscribe(&a, "NYSE/EQ/IBM", SlowPolicy::Default, 200).ok());
  ASSERT_TRUE(router.subscribe(&a, "NYSE/EQ/IBM").ok());  // a no-op, like the policy
  EXPECT_EQ(router.conflate_ms_of(&a, ibm), 200u);
  EXPECT_EQ(router.subscription_count(&a), 1u);
}

TEST_F(RouterConflationTest, RemovingTheOutletForgetsEverything) {
  auto ibm = advertise("NYSE/EQ/IBM");
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>", SlowPolicy::Default, 200).ok());
  ASSERT_TRUE(router.subscribe(&a, "NYSE/EQ/>", SlowPolicy::Default, 100).ok());
  router.remove_outlet(&a);
  EXPECT_FALSE(router.delivers(&a, ibm));
  EXPECT_EQ(router.conflate_ms_of(&a, ibm), 0u);
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>").ok());
  EXPECT_EQ(router.conflate_ms_of(&a, ibm), 0u);
}

}  // namespace
}  // namespace tw::broker
