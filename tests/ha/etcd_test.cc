#include "ha/etcd.h"

#include "ha/etcd_fixture.h"

namespace tw::ha {
namespace {

class EtcdTest : public WithEtcd {
 protected:
  Etcd client() { return Etcd(EtcdOptions{{etcd_->endpoint()}}); }
};

TEST_F(EtcdTest, TheFirstCampaignWinsAndTheSecondSeesItsHolderAndEpoch) {
  Etcd a = client(), b = client();
  auto lease_a = a.grant(5), lease_b = b.grant(5);
  ASSERT_TRUE(lease_a && lease_b);
  EXPECT_GE(lease_a->ttl_s, 5);
  auto won = a.campaign("tw/leader", "broker-a", lease_a->id);
  ASSERT_TRUE(won) << won.error().message;
  EXPECT_TRUE(won->won);
  EXPECT_GT(won->leader.epoch, 0);
  auto lost = b.campaign("tw/leader", "broker-b", lease_b->id);
  ASSERT_TRUE(lost);
  EXPECT_FALSE(lost->won);
  EXPECT_EQ(lost->leader.value, "broker-a");
  EXPECT_EQ(lost->leader.epoch, won->leader.epoch);
  EXPECT_EQ(lost->leader.lease, lease_a->id);
}

TEST_F(EtcdTest, AResignedKeyGoesToTheNextCampaignWithAHigherEpoch) {
  Etcd a = client(), b = client();
  auto lease_a = a.grant(5), lease_b = b.grant(5);
  ASSERT_TRUE(lease_a && lease_b);
  auto first = a.campaign("tw/leader", "broker-a", lease_a->id);
  ASSERT_TRUE(first && first->won);
  // A stale epoch deletes nothing: a deposed leader cannot remove its successor's key.
  auto stale = b.resign("tw/leader", first->leader.epoch - 1);
  ASSERT_TRUE(stale);
  EXPECT_FALSE(*stale);
  auto resigned = a.resign("tw/leader", first->leader.epoch);
  ASSERT_TRUE(resigned && *resigned);
  auto second = b.campaign("tw/leader", "broker-b", lease_b->id);
  ASSERT_TRUE(second && second->won);
  EXPECT_GT(second->leader.epoch, first->leader.epoch);
  auto holder = a.leader("tw/leader");
  ASSERT_TRUE(holder && *holder);
  EXPECT_EQ((*holder)->value, "broker-b");
}

TEST_F(EtcdTest, ARevokedLeaseRenewsToZeroAndTakesItsKeyAlong) {
  Etcd a = client();
  auto lease = a.grant(5);
  ASSERT_TRUE(lease);
  ASSERT_TRUE(a.campaign("tw/leader", "broker-a", lease->id)->won);
  auto ttl = a.keep_alive(lease->id);
  ASSERT_TRUE(ttl);
  EXPECT_GT(*ttl, 0);
  ASSERT_TRUE(a.revoke(lease->id));
  ttl = a.keep_alive(lease->id);
  ASSERT_TRUE(ttl);
  EXPECT_EQ(*ttl, 0);
  auto holder = a.leader("tw/leader");
  ASSERT_TRUE(holder);
  EXPECT_FALSE(holder->has_value());
}

TEST_F(EtcdTest, ADeadEndpointIsPassedOverForTheNextOne) {
  const std::string dead = "http://127.0.0.1:" + std::to_string(tw::testing::pick_free_port());
  Etcd a(EtcdOptions{{dead, etcd_->endpoint()}, std::chrono::milliseconds(500)});
  auto lease = a.grant(5);
  ASSERT_TRUE(lease) << lease.error().message;
  EXPECT_EQ(a.endpoint(), etcd_->endpoint());
}

TEST(EtcdUnreachable, EveryCallFailsWithTheEndpointsNamed) {
  const std::string dead = "http://127.0.0.1:" + std::to_string(tw::testing::pick_free_port());
  Etcd a(EtcdOptions{{dead}, std::chrono::milliseconds(300)});
  auto lease = a.grant(5);
  ASSERT_FALSE(lease);
  EXPECT_NE(lease.error().message.find(dead), std::string::npos) << lease.error().message;
}

}  // namespace
}  // namespace tw::ha
