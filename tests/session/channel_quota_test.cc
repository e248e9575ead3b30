#include "session/channel_quota.h"

#include <gtest/gtest.h>

#include <memory>

namespace tw::session {
namespace {

// What advertise() would do: create the channel when it is new and allowed.
bool create(ChannelQuota& quota, const config::Limits& limits, const auth::Grants* grants,
            auth::Authority* authority, bool topic_is_new = true) {
  broker::Advertiser by = quota.ask(nullptr, limits, grants, authority);
  by.created = topic_is_new && by.may_create;
  quota.settle(by);
  return by.created;
}

struct UserBound : ::testing::Test {
  std::shared_ptr<const auth::Policy> policy = *auth::Policy::parse(
      "[users.alice]\nmax_channels = 2\n[users.bob]\n", "users.toml");
  auth::Authority authority{auth::Authority::Settings{}, policy};
  const auth::Grants* alice = policy->find_user("alice")->grants.get();
  const auth::Grants* bob = policy->find_user("bob")->grants.get();
  config::Limits limits;
};

TEST(ChannelQuota, AConnectionsOwnBoundHoldsWithoutUsers) {
  config::Limits limits;
  limits.max_channels_per_connection = 2;
  limits.max_channels_per_user = 1;  // no user when authentication is off
  ChannelQuota quota;
  EXPECT_TRUE(create(quota, limits, nullptr, nullptr));
  EXPECT_TRUE(create(quota, limits, nullptr, nullptr));
  broker::Advertiser by = quota.ask(nullptr, limits, nullptr, nullptr);
  EXPECT_FALSE(by.may_create);
  EXPECT_STREQ(by.refusal, "this connection created max_channels_per_connection channels already");
  EXPECT_FALSE(quota.settle(by));
}

TEST_F(UserBound, TheUsersConnectionsShareItsBound) {
  ChannelQuota first, second;
  EXPECT_TRUE(create(first, limits, alice, &authority));
  EXPECT_TRUE(create(second, limits, alice, &authority));
  broker::Advertiser by = second.ask(nullptr, limits, alice, &authority);
  EXPECT_FALSE(by.may_create);
  EXPECT_STREQ(by.refusal, "this user's connections created their max_channels channels already");
  EXPECT_TRUE(second.settle(by));  // the user's bound refused it
  ChannelQuota other_user;
  EXPECT_TRUE(create(other_user, limits, bob, &authority));  // bob has no bound (max_channels_per_user 0)
}

TEST_F(UserBound, ATopicThatExistedTakesNothing) {
  ChannelQuota quota;
  EXPECT_TRUE(create(quota, limits, alice, &authority));
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(create(quota, limits, alice, &authority, /*topic_is_new=*/false));
  EXPECT_TRUE(create(quota, limits, alice, &authority));
}

TEST_F(UserBound, AClosedConnectionGivesItsChannelsBack) {
  ChannelQuota staying;
  {
    ChannelQuota closing;
    EXPECT_TRUE(create(closing, limits, alice, &authority));
    EXPECT_TRUE(create(closing, limits, alice, &authority));
    EXPECT_FALSE(create(staying, limits, alice, &authority));
  }
  EXPECT_TRUE(create(staying, limits, alice, &authority));
}

TEST_F(UserBound, TheBrokersBoundServesUsersWithoutTheirOwn) {
  limits.max_channels_per_user = 1;
  ChannelQuota first, second, alices;
  EXPECT_TRUE(create(first, limits, bob, &authority));
  EXPECT_FALSE(create(second, limits, bob, &authority));
  EXPECT_TRUE(create(alices, limits, alice, &authority));  // alice's own bound (2) wins over the broker's
  EXPECT_TRUE(create(alices, limits, alice, &authority));
}

}  // namespace
}  // namespace tw::session
