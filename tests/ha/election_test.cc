#include "ha/election.h"

#include <atomic>
#include <thread>

#include "ha/etcd_fixture.h"

namespace tw::ha {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class ElectionTest : public WithEtcd {
 protected:
  std::unique_ptr<Election> make(const std::string& name, int64_t ttl_s) {
    return std::make_unique<Election>(EtcdOptions{{etcd_->endpoint()}}, ElectionOptions{.name = name, .ttl_s = ttl_s},
                                      nullptr);
  }
  // Polls until `done` or the wait ends; at every poll at most one of the
  // two may act as primary (the property the whole pair stands on).
  template <typename Done>
  bool until(Election& a, Election& b, std::chrono::milliseconds wait, Done done) {
    const auto end = Clock::now() + wait;
    while (Clock::now() < end) {
      EXPECT_FALSE(a.may_act_as_primary() && b.may_act_as_primary()) << "two primaries at once";
      if (done()) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
};

TEST_F(ElectionTest, OfTwoBrokersOneIsPrimaryAndTheOtherKnowsWhichAndItsEpoch) {
  auto a = make("broker-a", 2), b = make("broker-b", 2);
  a->start();
  b->start();
  // The first primary waits a TTL before acting: it never saw the lease of
  // whoever held the key before it (a previous run's primary, say).
  ASSERT_TRUE(until(*a, *b, 10s, [&] { return (a->may_act_as_primary() || b->may_act_as_primary()) &&
                                             !b->role().leader.empty() && !a->role().leader.empty(); }));
  Election& primary = a->role().primary ? *a : *b;
  Election& backup = a->role().primary ? *b : *a;
  EXPECT_TRUE(primary.may_act_as_primary());
  EXPECT_FALSE(backup.may_act_as_primary());
  EXPECT_EQ(backup.role().leader, primary.role().leader);
  EXPECT_EQ(backup.role().epoch, primary.role().epoch);
  EXPECT_GT(primary.role().epoch, 0);
  // Watched for longer than a TTL: renewals keep the same term.
  const int64_t epoch = primary.role().epoch;
  EXPECT_FALSE(until(*a, *b, 3s, [&] { return !primary.role().primary || primary.role().epoch != epoch; }));
}

// The stall this guards against is the TTL (10 s): a stopping primary that
// did not resign would leave the backup waiting that long for the key.
TEST_F(ElectionTest, AStoppingPrimaryResignsAndTheBackupTakesOverWithAHigherEpochWithoutWaitingTheTtl) {
  auto a = make("broker-a", 10), b = make("broker-b", 10);
  a->start();
  ASSERT_TRUE(until(*a, *b, 10s, [&] { return a->role().primary; }));
  b->start();
  ASSERT_TRUE(until(*a, *b, 10s, [&] { return b->role().leader == "broker-a"; }));
  const int64_t first = a->role().epoch;
  const auto stopped = Clock::now();
  a->stop();
  EXPECT_FALSE(a->may_act_as_primary());
  ASSERT_TRUE(until(*a, *b, 5s, [&] { return b->role().primary; })) << "the backup waited for the TTL";
  EXPECT_LT(Clock::now() - stopped, 5s);
  EXPECT_GT(b->role().epoch, first);
}

// Fencing by time: cut off from etcd (etcd paused), the primary must stop
// acting as one before its lease can end in etcd: within the TTL of the
// last renewal it sent, which was before the pause.
TEST_F(ElectionTest, APrimaryCutOffFromEtcdStopsActingBeforeItsLeaseCanEnd) {
  constexpr int64_t kTtl = 2;
  auto a = make("broker-a", kTtl), b = make("broker-b", kTtl);
  a->start();
  ASSERT_TRUE(until(*a, *b, 10s, [&] { return a->may_act_as_primary(); }));
  b->start();
  ASSERT_TRUE(until(*a, *b, 10s, [&] { return b->role().leader == "broker-a"; }));
  const int64_t first = a->role().epoch;
  etcd_->pause();
  const auto paused = Clock::now();
  ASSERT_TRUE(until(*a, *b, 10s, [&] { return !a->may_act_as_primary(); }));
  EXPECT_LT(Clock::now() - paused, std::chrono::seconds(kTtl)) << "acted as primary past its lease";
  // Nor does it call itself primary (the admin API's role), while its
  // renewal may still be waiting for an answer.
  EXPECT_FALSE(a->role().primary);
  // Past the lease's end in etcd too: whoever wins when etcd returns, the
  // new term has a higher epoch. (Resumed sooner, etcd may still renew the
  // lease: the term goes on, same primary, same epoch.)
  std::this_thread::sleep_for(std::chrono::seconds(kTtl) + 500ms);
  etcd_->resume();
  ASSERT_TRUE(until(*a, *b, 15s, [&] { return a->may_act_as_primary() || b->may_act_as_primary(); }));
  const int64_t next = a->may_act_as_primary() ? a->role().epoch : b->role().epoch;
  EXPECT_GT(next, first);
}

// A manual switch-over: an operator deletes the leader key (etcdctl del, or
// resign with the term's epoch); the primary steps down and, held off for a
// TTL, leaves the key to the backup.
TEST_F(ElectionTest, DeletingTheLeaderKeyHandsTheTermToTheBackup) {
  auto a = make("broker-a", 3), b = make("broker-b", 3);
  a->start();
  ASSERT_TRUE(until(*a, *b, 10s, [&] { return a->role().primary; }));
  b->start();
  ASSERT_TRUE(until(*a, *b, 10s, [&] { return b->role().leader == "broker-a"; }));
  Etcd operator_client(EtcdOptions{{etcd_->endpoint()}});
  auto deleted = operator_client.resign("tickwire/ha/leader", a->role().epoch);
  ASSERT_TRUE(deleted && *deleted);
  ASSERT_TRUE(until(*a, *b, 10s, [&] { return b->role().primary; }));
  EXPECT_FALSE(a->may_act_as_primary());
  ASSERT_TRUE(until(*a, *b, 10s, [&] { return a->role().leader == "broker-b"; }));
}

// A primary back from a pause (SIGSTOP) or a partition past its lease's end
// finds its lease gone in etcd (here: revoked under it). It says who leads
// now at its next renewal, a third of the TTL, not after its hold-off (a
// TTL), so that its broker refuses clients naming the new primary at once.
// Its fence never depended on that: it passed by its own monotonic clock.
TEST_F(ElectionTest, APrimaryWhoseLeaseEndedLearnsItsSuccessorAtItsNextRenewal) {
  constexpr int64_t kTtl = 9;  // renewals every 3 s, a hold-off of 9 s
  auto a = make("broker-a", kTtl), b = make("broker-b", kTtl);
  a->start();
  ASSERT_TRUE(until(*a, *b, 15s, [&] { return a->role().primary; }));
  b->start();
  ASSERT_TRUE(until(*a, *b, 10s, [&] { return b->role().leader == "broker-a"; }));
  Etcd operator_client(EtcdOptions{{etcd_->endpoint()}});
  auto holder = operator_client.leader("tickwire/ha/leader");
  ASSERT_TRUE(holder && *holder);
  ASSERT_TRUE(operator_client.revoke((*holder)->lease));  // a's lease ends, and its key with it
  const auto revoked = Clock::now();
  ASSERT_TRUE(until(*a, *b, 10s, [&] { return b->role().primary; }));
  ASSERT_TRUE(until(*a, *b, 15s, [&] { return a->role().leader == "broker-b"; }));
  EXPECT_LT(Clock::now() - revoked, std::chrono::seconds(kTtl) - 2s) << "learned only after its hold-off";
  EXPECT_FALSE(a->role().primary);
  EXPECT_FALSE(a->may_act_as_primary());
}

TEST(ElectionWithoutEtcd, NobodyLeadsAndNothingActsAsPrimary) {
  const std::string dead = "http://127.0.0.1:" + std::to_string(tw::testing::pick_free_port());
  Election a(EtcdOptions{{dead}, 200ms}, ElectionOptions{.name = "broker-a", .ttl_s = 2}, nullptr);
  a.start();
  const auto end = Clock::now() + 1s;
  while (Clock::now() < end) {
    ASSERT_FALSE(a.may_act_as_primary());
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(a.role(), Role{});
}

}  // namespace
}  // namespace tw::ha
