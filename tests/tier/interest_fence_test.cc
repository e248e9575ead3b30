// The PublishFence of a tiered broker (tier/interest_fence.h): a publish
// read on one access point waits for the subscriptions the other access
// points had sent on when it was read, and for no later one.
#include "tier/interest_fence.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "tier/uplink.h"

namespace tw::tier {
namespace {

class InterestFenceTest : public ::testing::Test {
 protected:
  // Gateway g applies the next Interest record from the other access point.
  void apply(Link& link) { count_one(link.interests_applied); }

  cache::ChannelDirectory directory_{2, 1000};
  // The other access point's links to gateways 0 and 1, and its uplink.
  Link to_gateway0_{1u << 16};
  Link to_gateway1_{1u << 16};
  Uplink other_{directory_, {&to_gateway0_, &to_gateway1_}, {nullptr, nullptr}};
  InterestFence fence_{{&to_gateway0_, &to_gateway1_}};
  std::vector<uint64_t> ticket_;
};

TEST_F(InterestFenceTest, NothingInFlightLetsAPublishGoAtOnce) {
  EXPECT_TRUE(fence_.clear(ticket_));
  other_.interest("a/>", true);
  apply(to_gateway0_);
  apply(to_gateway1_);
  EXPECT_TRUE(fence_.clear(ticket_)) << "every gateway applied it";
}

TEST_F(InterestFenceTest, AWildcardWaitsForEveryGatewayAnExactTopicForItsOwn) {
  other_.interest("a/>", true);  // to both gateways
  ASSERT_FALSE(fence_.clear(ticket_));
  apply(to_gateway0_);
  EXPECT_FALSE(fence_.reached(ticket_)) << "gateway 1 has not applied it yet";
  apply(to_gateway1_);
  EXPECT_TRUE(fence_.reached(ticket_));

  const std::string_view topic = "b/c";
  Link& owner = directory_.shard_of(topic) == 0 ? to_gateway0_ : to_gateway1_;
  other_.interest(topic, true);
  ASSERT_FALSE(fence_.clear(ticket_));
  apply(owner);
  EXPECT_TRUE(fence_.reached(ticket_)) << "only the topic's gateway was sent it";
}

TEST_F(InterestFenceTest, APublishWaitsForWhatWasInFlightWhenItCameNotForLaterSubscriptions) {
  other_.interest("x/>", true);
  ASSERT_FALSE(fence_.clear(ticket_));
  other_.interest("y/>", true);  // after the publish was read: not its concern
  apply(to_gateway0_);
  apply(to_gateway1_);
  EXPECT_TRUE(fence_.reached(ticket_));
  EXPECT_FALSE(fence_.clear(ticket_)) << "a publish read now waits for y/> too";
}

TEST_F(InterestFenceTest, AnUnsubscribeIsNothingToWaitFor) {
  other_.interest("a/>", false);
  EXPECT_TRUE(fence_.clear(ticket_));
}

}  // namespace
}  // namespace tw::tier
