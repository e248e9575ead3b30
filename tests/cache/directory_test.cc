// ChannelDirectory: broker-wide channel ids whose value names the owning
// gateway, shared (under a lock) by every thread of a tiered broker.
#include "cache/directory.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

namespace tw::cache {
namespace {

using wire::PayloadKind;

std::string topic_name(int n) { return "EQ/SYM" + std::to_string(n) + ".N"; }

TEST(ChannelDirectory, IdsEncodeTheShardOfTheTopic) {
  for (uint32_t gateways : {1u, 2u, 3u, 7u}) {
    SCOPED_TRACE("gateways " + std::to_string(gateways));
    ChannelDirectory dir(gateways, 100'000);
    EXPECT_EQ(dir.gateways(), gateways);
    std::vector<int> per_shard(gateways, 0);
    for (int n = 0; n < 500; ++n) {
      const std::string topic = topic_name(n);
      auto got = dir.intern(topic, PayloadKind::FieldList);
      ASSERT_EQ(got.result, ChannelDirectory::Intern::Ok);
      ASSERT_NE(got.id, 0u);
      const uint32_t shard = dir.shard_of(topic);
      ASSERT_LT(shard, gateways);
      EXPECT_EQ((got.id - 1) % gateways, shard) << topic;
      EXPECT_EQ(dir.shard_of(got.id), shard) << topic;
      // Within a shard, ids are dense: 1 + shard + gateways * n.
      EXPECT_EQ(got.id, 1 + shard + gateways * static_cast<uint32_t>(per_shard[shard]++)) << topic;
    }
    // With more than one gateway, 500 topics land on more than one shard.
    int used = 0;
    for (int c : per_shard) used += c > 0;
    EXPECT_EQ(used, static_cast<int>(gateways));
  }
}

TEST(ChannelDirectory, ZeroGatewaysMeansOne) {
  ChannelDirectory dir(0, 10);
  EXPECT_EQ(dir.gateways(), 1u);
  EXPECT_EQ(dir.intern("A", PayloadKind::FieldList).id, 1u);
  EXPECT_EQ(dir.intern("B", PayloadKind::FieldList).id, 2u);
}

TEST(ChannelDirectory, SameTopicSameId) {
  ChannelDirectory dir(4, 100);
  auto first = dir.intern("FX/EURUSD", PayloadKind::FieldList);
  auto other = dir.intern("FX/USDJPY", PayloadKind::FieldList);
  auto again = dir.intern(std::string("FX/") + "EURUSD", PayloadKind::FieldList);
  EXPECT_EQ(again.result, ChannelDirectory::Intern::Ok);
  EXPECT_EQ(again.id, first.id);
  EXPECT_EQ(again.kind, PayloadKind::FieldList);
  EXPECT_NE(other.id, first.id);
}

TEST(ChannelDirectory, KindMismatchKeepsTheChannelAndItsKind) {
  ChannelDirectory dir(2, 100);
  auto created = dir.intern("NEWS/ALERTS", PayloadKind::Opaque);
  ASSERT_EQ(created.result, ChannelDirectory::Intern::Ok);
  EXPECT_EQ(created.kind, PayloadKind::Opaque);
  auto clash = dir.intern("NEWS/ALERTS", PayloadKind::FieldList);
  EXPECT_EQ(clash.result, ChannelDirectory::Intern::KindMismatch);
  EXPECT_EQ(clash.id, created.id);
  EXPECT_EQ(clash.kind, PayloadKind::Opaque);
  auto same = dir.intern("NEWS/ALERTS", PayloadKind::Opaque);
  EXPECT_EQ(same.result, ChannelDirectory::Intern::Ok);
  EXPECT_EQ(same.id, created.id);
}

TEST(ChannelDirectory, FullAtMaxChannelsButKnownTopicsStillResolve) {
  ChannelDirectory dir(3, 5);
  std::vector<ChannelId> ids;
  for (int n = 0; n < 5; ++n) {
    auto got = dir.intern(topic_name(n), PayloadKind::FieldList);
    ASSERT_EQ(got.result, ChannelDirectory::Intern::Ok);
    ids.push_back(got.id);
  }
  auto full = dir.intern("ONE/TOO/MANY", PayloadKind::FieldList);
  EXPECT_EQ(full.result, ChannelDirectory::Intern::Full);
  EXPECT_EQ(full.id, 0u);
  EXPECT_EQ(dir.intern("ONE/TOO/MANY", PayloadKind::FieldList).result, ChannelDirectory::Intern::Full);
  for (int n = 0; n < 5; ++n) {
    auto got = dir.intern(topic_name(n), PayloadKind::FieldList);
    EXPECT_EQ(got.result, ChannelDirectory::Intern::Ok);
    EXPECT_EQ(got.id, ids[static_cast<size_t>(n)]);
  }
}

// Four threads intern overlapping ranges of 10,000 topics in different
// orders: whoever creates a channel, every thread must see the same id.
TEST(ChannelDirectory, ConcurrentInterningAgreesOnEveryId) {
  constexpr int kTopics = 10'000, kThreads = 4;
  ChannelDirectory dir(3, kTopics);
  std::vector<std::string> topics;
  for (int n = 0; n < kTopics; ++n) topics.push_back(topic_name(n));

  // Thread t takes 3/4 of the topics starting at t/4, half of them backwards:
  // every topic is interned by three threads, first by different ones.
  std::vector<std::vector<ChannelId>> seen(kThreads, std::vector<ChannelId>(kTopics, 0));
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const int start = t * kTopics / kThreads;
      const int count = kTopics * 3 / 4;
      for (int i = 0; i < count; ++i) {
        const int k = t % 2 == 0 ? i : count - 1 - i;
        const int n = (start + k) % kTopics;
        auto got = dir.intern(topics[static_cast<size_t>(n)], PayloadKind::FieldList);
        if (got.result != ChannelDirectory::Intern::Ok) ++failures[static_cast<size_t>(t)];
        seen[static_cast<size_t>(t)][static_cast<size_t>(n)] = got.id;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[static_cast<size_t>(t)], 0) << "thread " << t;

  std::set<ChannelId> unique;
  std::vector<ChannelId> agreed_ids(kTopics, 0);
  for (int n = 0; n < kTopics; ++n) {
    ChannelId agreed = 0;
    int seen_by = 0;
    for (int t = 0; t < kThreads; ++t) {
      const ChannelId id = seen[static_cast<size_t>(t)][static_cast<size_t>(n)];
      if (id == 0) continue;
      ++seen_by;
      if (agreed == 0) agreed = id;
      ASSERT_EQ(id, agreed) << topics[static_cast<size_t>(n)] << " thread " << t;
    }
    ASSERT_EQ(seen_by, 3) << topics[static_cast<size_t>(n)];
    EXPECT_EQ((agreed - 1) % 3, dir.shard_of(topics[static_cast<size_t>(n)]));
    unique.insert(agreed);
    agreed_ids[static_cast<size_t>(n)] = agreed;
  }
  EXPECT_EQ(unique.size(), static_cast<size_t>(kTopics));
  // The directory is exactly full now; the ids afterwards match.
  EXPECT_EQ(dir.intern("NEW/TOPIC", PayloadKind::FieldList).result, ChannelDirectory::Intern::Full);
  for (int n = 0; n < kTopics; n += 97) {
    EXPECT_EQ(dir.intern(topics[static_cast<size_t>(n)], PayloadKind::FieldList).id, agreed_ids[static_cast<size_t>(n)]);
  }
}

// The gateway frees a channel only when no publisher holds its name; a
// REGISTER that comes after the free gets a new id, never the freed one.
TEST(ChannelDirectory, PublisherHoldsKeepANameUntilReleased) {
  ChannelDirectory dir(2, 10);
  auto held = dir.intern("A/B", PayloadKind::FieldList, true, true);
  ASSERT_EQ(held.result, ChannelDirectory::Intern::Ok);
  EXPECT_TRUE(held.created);
  auto again = dir.intern("A/B", PayloadKind::FieldList, true, true);  // a second publisher
  EXPECT_FALSE(again.created);
  EXPECT_EQ(again.id, held.id);
  EXPECT_FALSE(dir.forget_if_unheld("A/B", held.id));
  EXPECT_FALSE(dir.release("A/B"));  // one hold left
  EXPECT_FALSE(dir.forget_if_unheld("A/B", held.id));
  EXPECT_TRUE(dir.release("A/B"));
  EXPECT_TRUE(dir.forget_if_unheld("A/B", held.id));
  auto renamed = dir.intern("A/B", PayloadKind::Opaque);  // gone: a new channel, of any kind
  EXPECT_TRUE(renamed.created);
  EXPECT_NE(renamed.id, held.id);
  EXPECT_TRUE(dir.forget_if_unheld("A/B", held.id));  // the old id's name is long gone: nothing to do
  EXPECT_EQ(dir.intern("A/B", PayloadKind::Opaque).id, renamed.id);
}

TEST(ChannelDirectory, MayCreateRefusesOnlyNewTopics) {
  ChannelDirectory dir(1, 10);
  ASSERT_EQ(dir.intern("A/B", PayloadKind::FieldList).result, ChannelDirectory::Intern::Ok);
  EXPECT_EQ(dir.intern("A/B", PayloadKind::FieldList, false).result, ChannelDirectory::Intern::Ok);
  EXPECT_EQ(dir.intern("A/C", PayloadKind::FieldList, false).result, ChannelDirectory::Intern::NotCreated);
}

}  // namespace
}  // namespace tw::cache
