// Queue: one durable queue's logic on its log (src/queue/queue.h), without threads.
#include "queue/queue.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "store/store_dir.h"

namespace tw::queue {
namespace {

using store::testing::bytes;
using store::testing::StoreDir;

struct Delivered {
  uint32_t bind_id;
  uint64_t seq;
  std::string payload;
  bool redelivered;
};

class QueueTest : public ::testing::Test {
 protected:
  QueueTest() : dir_("queue-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    config_.name = "orders";
    config_.subscriptions = {"ORD/>", "FILL/*/X"};
    std::filesystem::create_directories(dir_.path());
  }
  std::unique_ptr<Queue> open() {
    auto q = Queue::open(config_, dir_.path(), store::LogOptions{.segment_bytes = 4096}, nullptr);
    EXPECT_TRUE(q.ok()) << q.error().message;
    return std::move(*q);
  }
  void put(Queue& q, int from, int to) {
    for (int i = from; i <= to; ++i) ASSERT_TRUE(q.append(1, "ORD/A", bytes("m" + std::to_string(i))).ok());
    ASSERT_TRUE(q.sync().ok());
  }
  std::vector<Delivered> deliver(Queue& q) {
    std::vector<Delivered> out;
    EXPECT_TRUE(q.deliver([&](const Consumer& to, const store::Record& r, bool again) {
                  out.push_back({to.bind_id, r.seq, store::testing::text(r.payload), again});
                }).ok());
    return out;
  }
  Consumer consumer(const std::shared_ptr<Port>& port, uint32_t bind_id, uint32_t window) {
    return {next_serial_++, port, bind_id, window, 0};
  }
  // `count` messages of 1,000 bytes stored at `timestamp_ns` (four to a 4 KiB
  // segment), delivered to a binding of port a_ and all acknowledged.
  void consume_all(Queue& q, int count, uint64_t timestamp_ns) {
    const std::string big(1000, 'x');
    for (int i = 0; i < count; ++i) ASSERT_TRUE(q.append(timestamp_ns, "ORD/A", bytes(big)).ok());
    ASSERT_TRUE(q.sync().ok());
    ASSERT_TRUE(q.bind(consumer(a_, 1, 100)));
    ASSERT_EQ(deliver(q).size(), static_cast<size_t>(count));
    q.ack(a_.get(), 1, static_cast<uint64_t>(count), true);
  }

  StoreDir dir_;
  config::QueueConfig config_;
  std::shared_ptr<Port> a_ = std::make_shared<Port>();
  std::shared_ptr<Port> b_ = std::make_shared<Port>();
  uint64_t next_serial_ = 1;
};

TEST_F(QueueTest, AttractsTopicsByItsSubscriptions) {
  auto q = open();
  EXPECT_TRUE(q->attracts("ORD/A"));
  EXPECT_TRUE(q->attracts("ORD/A/B"));
  EXPECT_TRUE(q->attracts("FILL/N/X"));
  EXPECT_FALSE(q->attracts("ORD"));
  EXPECT_FALSE(q->attracts("FILL/N/Y"));
}

TEST_F(QueueTest, DeliversWithinTheWindowAndAcksFreeIt) {
  auto q = open();
  put(*q, 1, 5);
  ASSERT_TRUE(q->bind(consumer(a_, 7, 2)));
  auto first = deliver(*q);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].seq, 1u);
  EXPECT_EQ(first[0].payload, "m1");
  EXPECT_FALSE(first[0].redelivered);
  EXPECT_TRUE(deliver(*q).empty());  // window full
  EXPECT_EQ(q->ack(a_.get(), 7, 1, false), 1u);
  auto second = deliver(*q);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].seq, 3u);
  EXPECT_EQ(q->ack(a_.get(), 7, 3, true), 2u);  // cumulative: 2 and 3
  EXPECT_EQ(deliver(*q).size(), 2u);
  EXPECT_EQ(q->depth(), 2u);
}

TEST_F(QueueTest, KnowsWhenItsOldestUnacknowledgedMessageWasStored) {
  auto q = open();
  q->settle(0);
  EXPECT_EQ(q->oldest_ns(), 0u);  // empty
  ASSERT_TRUE(q->append(1'000, "ORD/A", bytes("a")).ok());
  ASSERT_TRUE(q->append(2'000, "ORD/A", bytes("b")).ok());
  ASSERT_TRUE(q->sync().ok());
  q->settle(0);
  EXPECT_EQ(q->oldest_ns(), 1'000u);
  ASSERT_TRUE(q->bind(consumer(a_, 1, 10)));
  ASSERT_EQ(deliver(*q).size(), 2u);
  q->ack(a_.get(), 1, 1, false);
  q->settle(0);
  EXPECT_EQ(q->oldest_ns(), 2'000u);
  q->ack(a_.get(), 1, 2, false);
  q->settle(0);
  EXPECT_EQ(q->oldest_ns(), 0u);
}

TEST_F(QueueTest, RoundRobinAmongNonExclusiveConsumers) {
  auto q = open();
  put(*q, 1, 4);
  ASSERT_TRUE(q->bind(consumer(a_, 1, 10)));
  ASSERT_TRUE(q->bind(consumer(b_, 1, 10)));
  auto got = deliver(*q);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].seq, 1u);
  // Alternating: two each.
  EXPECT_EQ(q->ack(a_.get(), 1, 4, true), 2u);
  EXPECT_EQ(q->ack(b_.get(), 1, 4, true), 2u);
}

TEST_F(QueueTest, ExclusiveQueueFeedsOnlyTheFirstConsumerUntilItLeaves) {
  config_.exclusive = true;
  auto q = open();
  put(*q, 1, 3);
  ASSERT_TRUE(q->bind(consumer(a_, 1, 10)));
  ASSERT_TRUE(q->bind(consumer(b_, 2, 10)));
  auto got = deliver(*q);
  ASSERT_EQ(got.size(), 3u);
  for (const auto& d : got) EXPECT_EQ(d.bind_id, 1u);
  EXPECT_EQ(q->ack(a_.get(), 1, 1, false), 1u);
  ASSERT_TRUE(q->unbind(a_.get(), 1));
  auto again = deliver(*q);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].bind_id, 2u);
  EXPECT_EQ(again[0].seq, 2u);
  EXPECT_TRUE(again[0].redelivered);
}

TEST_F(QueueTest, AConsumerThatLeavesGivesItsMessagesToAnotherFlaggedRedelivered) {
  auto q = open();
  put(*q, 1, 2);
  ASSERT_TRUE(q->bind(consumer(a_, 1, 10)));
  ASSERT_EQ(deliver(*q).size(), 2u);
  ASSERT_TRUE(q->bind(consumer(b_, 1, 10)));
  q->unbind_all(a_.get());
  auto got = deliver(*q);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].seq, 1u);
  EXPECT_TRUE(got[0].redelivered);
  EXPECT_TRUE(got[1].redelivered);
}

TEST_F(QueueTest, NackRedeliversFlagged) {
  auto q = open();
  put(*q, 1, 1);
  ASSERT_TRUE(q->bind(consumer(a_, 1, 10)));
  ASSERT_EQ(deliver(*q).size(), 1u);
  EXPECT_TRUE(q->nack(a_.get(), 1, 1));
  auto got = deliver(*q);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].redelivered);
  EXPECT_FALSE(q->nack(b_.get(), 1, 1));  // not that binding's
}

TEST_F(QueueTest, RefusesPastItsLimits) {
  config_.max_messages = 3;
  auto q = open();
  put(*q, 1, 3);
  Status full = q->admits(100);
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.error().message.find("max_messages"), std::string::npos);
  ASSERT_TRUE(q->bind(consumer(a_, 1, 10)));
  ASSERT_EQ(deliver(*q).size(), 3u);
  EXPECT_FALSE(q->admits(100).ok());  // delivered is not acknowledged
  q->ack(a_.get(), 1, 1, false);
  EXPECT_TRUE(q->admits(100).ok());
}

TEST_F(QueueTest, RefusesPastMaxBytes) {
  config_.max_bytes = 200;
  auto q = open();
  ASSERT_TRUE(q->admits(100).ok());
  put(*q, 1, 3);
  Status full = q->admits(200);
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.error().message.find("max_bytes"), std::string::npos);
}

// The acknowledgement floor drops whole segments and survives a restart:
// what was acknowledged is not delivered again; the rest is, flagged.
TEST_F(QueueTest, FloorDropsSegmentsAndSurvivesRestart) {
  std::string big(1000, 'x');
  {
    auto q = open();
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(q->append(1, "ORD/A", bytes(big)).ok());
    ASSERT_TRUE(q->sync().ok());
    const uint64_t before = q->bytes();
    ASSERT_TRUE(q->bind(consumer(a_, 1, 15)));
    ASSERT_EQ(deliver(*q).size(), 15u);
    q->ack(a_.get(), 1, 12, true);
    q->settle(0);
    EXPECT_EQ(q->floor(), 13u);
    EXPECT_LT(q->bytes(), before);  // segments wholly below 13 dropped
  }
  auto q = open();
  ASSERT_TRUE(q->bind(consumer(a_, 1, 100)));
  auto got = deliver(*q);
  ASSERT_EQ(got.size(), 8u);
  EXPECT_EQ(got.front().seq, 13u);
  EXPECT_TRUE(got.front().redelivered);  // stored before the restart: maybe delivered then
  EXPECT_EQ(got.back().seq, 20u);
  put(*q, 21, 21);
  auto fresh = deliver(*q);
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_FALSE(fresh[0].redelivered);
}


// Replay (docs/guaranteed.md): with retain_bytes, acknowledged messages stay
// and can be delivered again, flagged; without, replay reaches only what is held.
TEST_F(QueueTest, ReplayDeliversAcknowledgedMessagesAgainFlagged) {
  config_.retain_bytes = 1u << 20;
  auto q = open();
  put(*q, 1, 5);
  ASSERT_TRUE(q->bind(consumer(a_, 1, 10)));
  ASSERT_EQ(deliver(*q).size(), 5u);
  q->ack(a_.get(), 1, 5, true);
  q->settle(0);
  EXPECT_EQ(q->depth(), 0u);
  EXPECT_EQ(q->replay(2), 2u);
  EXPECT_EQ(q->depth(), 4u);
  auto again = deliver(*q);
  ASSERT_EQ(again.size(), 4u);
  EXPECT_EQ(again.front().seq, 2u);
  EXPECT_EQ(again.back().seq, 5u);
  for (const Delivered& d : again) EXPECT_TRUE(d.redelivered) << d.seq;
  put(*q, 6, 6);
  auto fresh = deliver(*q);
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_FALSE(fresh[0].redelivered);  // new since the replay
  EXPECT_EQ(q->replay(100), 7u);       // nothing to replay past the newest
}

TEST_F(QueueTest, ReplaySkipsWhatABindingStillHoldsAndCountsItOnce) {
  config_.retain_bytes = 1u << 20;
  auto q = open();
  put(*q, 1, 5);
  ASSERT_TRUE(q->bind(consumer(a_, 1, 10)));
  ASSERT_EQ(deliver(*q).size(), 5u);
  q->ack(a_.get(), 1, 3, true);  // 4 and 5 still held by the binding
  q->replay(1);
  EXPECT_EQ(q->depth(), 5u);
  auto again = deliver(*q);
  ASSERT_EQ(again.size(), 3u);
  EXPECT_EQ(again.back().seq, 3u);
  EXPECT_EQ(q->depth(), 5u);
  EXPECT_TRUE(q->nack(a_.get(), 1, 5));  // given back: delivered once more, not twice
  auto nacked = deliver(*q);
  ASSERT_EQ(nacked.size(), 1u);
  EXPECT_EQ(nacked[0].seq, 5u);
  q->ack(a_.get(), 1, 5, true);
  EXPECT_EQ(q->depth(), 0u);
  EXPECT_TRUE(deliver(*q).empty());
}

TEST_F(QueueTest, WithoutRetentionReplayStartsAtTheOldestHeld) {
  auto q = open();
  consume_all(*q, 20, 1);
  q->settle(0);
  const uint64_t start = q->replay(1);
  EXPECT_GT(start, 1u);  // the acknowledged segments went
  EXPECT_EQ(deliver(*q).size(), 21u - start);
}

TEST_F(QueueTest, RetainedMessagesAgeOut) {
  config_.retain_bytes = 1u << 20;
  config_.retain_age_s = 60;
  auto q = open();
  consume_all(*q, 20, 1'000'000'000);
  q->settle(2'000'000'000);  // a second after they were stored: kept
  const uint64_t kept = q->bytes();
  q->settle(62'000'000'000ull);  // past retain_age_s: all but the last segment go
  EXPECT_LT(q->bytes(), kept);
  EXPECT_GT(q->replay(1), 1u);
}

TEST_F(QueueTest, RetainedMessagesGiveWayToNewOnes) {
  config_.retain_bytes = 1u << 20;
  config_.max_bytes = 30'000;
  auto q = open();
  consume_all(*q, 20, 1);
  q->settle(0);
  const uint64_t kept = q->bytes();
  EXPECT_TRUE(q->admits(12'000).ok()) << "what replay keeps gives way to new messages";
  EXPECT_LT(q->bytes(), kept);
}

TEST_F(QueueTest, ReplayFromATimeFindsTheFirstMessageStoredThen) {
  config_.retain_bytes = 1u << 20;
  auto q = open();
  for (uint64_t t = 1; t <= 5; ++t) ASSERT_TRUE(q->append(t * 1000, "ORD/A", bytes("m")).ok());
  ASSERT_TRUE(q->sync().ok());
  auto at = q->seq_at_time(3000);
  ASSERT_TRUE(at.ok());
  EXPECT_EQ(*at, 3u);
  auto later = q->seq_at_time(9000);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(*later, 6u);  // nothing stored then yet
}

}  // namespace
}  // namespace tw::queue
