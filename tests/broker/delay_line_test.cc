// DelayLine: per-bucket merging, due times never earlier than the delay,
// byte accounting against the shared budget, and the bound on entries.
#include "broker/delay_line.h"

#include <gtest/gtest.h>

#include <vector>

#include "broker/payloads.h"
#include "tickwire/fields/field_list.h"

namespace tw::broker {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kSec = 1'000 * kMs;

std::vector<uint8_t> two_fields(int64_t bid, int64_t ask) {
  std::vector<uint8_t> buf(64);
  fields::FieldListWriter w(buf);
  w.add_int(22, bid);
  w.add_int(25, ask);
  buf.resize(w.finish());
  return buf;
}

int64_t field(const DelayLine::Entry& e, uint16_t id) {
  const auto* f = e.fields.find(id);
  return f ? f->i : -1;
}

class DelayLineTest : public ::testing::Test {
 protected:
  DelayBudget budget{1 << 20};
  DelayLine line{wire::PayloadKind::FieldList, 10 * kSec, 1 * kSec, budget};
};

TEST_F(DelayLineTest, UpdatesWithinABucketMergeFieldByField) {
  ASSERT_TRUE(line.record(two_fields(1, 2), false, 1, 0));
  ASSERT_TRUE(line.record(int_field(22, 3), false, 2, 400 * kMs));
  ASSERT_TRUE(line.record(int_field(30, 9), false, 3, 999 * kMs));
  ASSERT_EQ(line.size(), 1u);
  const auto& e = line.entries().front();
  EXPECT_EQ(e.messages, 3u);
  EXPECT_EQ(e.seq, 3u);
  EXPECT_FALSE(e.image);
  EXPECT_EQ(field(e, 22), 3);  // the latest value
  EXPECT_EQ(field(e, 25), 2);  // no value lost
  EXPECT_EQ(field(e, 30), 9);
  // One bucket after the entry opened, a new entry starts.
  ASSERT_TRUE(line.record(int_field(22, 4), false, 4, 1 * kSec));
  ASSERT_EQ(line.size(), 2u);
  EXPECT_EQ(field(line.entries().back(), 22), 4);
  EXPECT_EQ(field(line.entries().back(), 25), -1);
}

TEST_F(DelayLineTest, AnImageReplacesWhatTheEntryHeld) {
  ASSERT_TRUE(line.record(two_fields(1, 2), false, 1, 0));
  ASSERT_TRUE(line.record(int_field(22, 7), true, 2, 10 * kMs));
  ASSERT_TRUE(line.record(int_field(30, 8), false, 3, 20 * kMs));
  ASSERT_EQ(line.size(), 1u);
  const auto& e = line.entries().front();
  EXPECT_TRUE(e.image);
  EXPECT_EQ(field(e, 22), 7);
  EXPECT_EQ(field(e, 25), -1);
  EXPECT_EQ(field(e, 30), 8);
}

TEST_F(DelayLineTest, NothingIsDueBeforeItsNewestMessageIsDelayLong) {
  ASSERT_TRUE(line.record(int_field(22, 1), false, 1, 0));
  ASSERT_TRUE(line.record(int_field(22, 2), false, 2, 900 * kMs));  // merged: the entry is due 10.9 s
  EXPECT_EQ(line.due(10 * kSec), nullptr);
  EXPECT_EQ(line.due(10 * kSec + 900 * kMs - 1), nullptr);
  const DelayLine::Entry* e = line.due(10 * kSec + 900 * kMs);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(field(*e, 22), 2);
  line.pop();
  EXPECT_EQ(line.size(), 0u);
}

TEST_F(DelayLineTest, StartsFromTheLiveImage) {
  cache::Channel live;
  live.id = 1;
  ASSERT_TRUE(live.apply(two_fields(5, 6), false));
  ASSERT_TRUE(live.apply(int_field(22, 7), false));
  line.start(live, 3 * kSec);
  ASSERT_EQ(line.size(), 1u);
  const auto& e = line.entries().front();
  EXPECT_TRUE(e.image);
  EXPECT_EQ(e.seq, 2u);
  EXPECT_EQ(e.due_ns, 13 * kSec);
  EXPECT_EQ(field(e, 22), 7);
  EXPECT_EQ(field(e, 25), 6);
  std::vector<uint8_t> out(line.payload_size(e));
  ASSERT_EQ(line.encode(e, out), out.size());
  fields::FieldImage decoded;
  ASSERT_TRUE(decoded.replace(out));
  EXPECT_EQ(decoded.find(22)->i, 7);

  cache::Channel empty;
  DelayLine other{wire::PayloadKind::FieldList, kSec, kSec, budget};
  other.start(empty, 0);
  EXPECT_EQ(other.size(), 0u);
}

TEST_F(DelayLineTest, MalformedPayloadsAreNotRecorded) {
  const std::vector<uint8_t> bad{0x05, 0x00, 0x01};
  EXPECT_FALSE(line.record(bad, false, 1, 0));
  EXPECT_EQ(line.size(), 0u);
  EXPECT_EQ(budget.used, 0u);
  ASSERT_TRUE(line.record(int_field(22, 1), false, 1, 0));
  const size_t bytes = line.bytes();
  EXPECT_FALSE(line.record(bad, false, 2, 10 * kMs));
  EXPECT_EQ(line.bytes(), bytes);
  EXPECT_EQ(field(line.entries().front(), 22), 1);
}

TEST_F(DelayLineTest, OpaqueChannelsKeepTheLastMessage) {
  DelayLine opaque{wire::PayloadKind::Opaque, kSec, kSec, budget};
  const std::vector<uint8_t> a{1, 2, 3}, b{4, 5};
  ASSERT_TRUE(opaque.record(a, false, 1, 0));
  ASSERT_TRUE(opaque.record(b, false, 2, 1));
  ASSERT_EQ(opaque.size(), 1u);
  std::vector<uint8_t> out(opaque.payload_size(opaque.entries().front()));
  ASSERT_EQ(opaque.encode(opaque.entries().front(), out), 2u);
  EXPECT_EQ(out, b);
}

TEST_F(DelayLineTest, BytesAreCountedInTheSharedBudget) {
  DelayLine second{wire::PayloadKind::FieldList, kSec, kSec, budget};
  ASSERT_TRUE(line.record(two_fields(1, 2), false, 1, 0));
  ASSERT_TRUE(line.record(int_field(22, 1), false, 2, 2 * kSec));
  ASSERT_TRUE(second.record(int_field(22, 1), false, 1, 0));
  size_t sum = 0;
  for (const auto& e : line.entries()) {
    EXPECT_EQ(e.bytes, sizeof(DelayLine::Entry) + e.fields.fields().capacity() * sizeof(fields::FieldImage::Field) +
                           line.payload_size(e));
    sum += e.bytes;
  }
  EXPECT_EQ(line.bytes(), sum);
  EXPECT_EQ(budget.used, line.bytes() + second.bytes());
  // Growing an entry in place is counted too.
  const size_t before = line.bytes();
  ASSERT_TRUE(line.record(int_field(40, 1), false, 3, 2 * kSec + 1));
  EXPECT_GT(line.bytes(), before);
  EXPECT_EQ(budget.used, line.bytes() + second.bytes());
  line.pop();
  EXPECT_EQ(budget.used, line.bytes() + second.bytes());
  line.clear();
  EXPECT_EQ(line.bytes(), 0u);
  EXPECT_EQ(budget.used, second.bytes());
  {
    DelayLine scoped{wire::PayloadKind::FieldList, kSec, kSec, budget};
    ASSERT_TRUE(scoped.record(two_fields(1, 2), false, 1, 0));
    EXPECT_EQ(budget.used, second.bytes() + scoped.bytes());
  }
  EXPECT_EQ(budget.used, second.bytes());  // a destroyed line gives its bytes back
}

TEST_F(DelayLineTest, TheBudgetIsExhaustedPastItsBound) {
  DelayBudget small{100};
  DelayLine tight{wire::PayloadKind::FieldList, kSec, kSec, small};
  EXPECT_FALSE(small.exhausted());
  ASSERT_TRUE(tight.record(two_fields(1, 2), false, 1, 0));
  EXPECT_GT(small.used, 100u);
  EXPECT_TRUE(small.exhausted());
  tight.pop();
  EXPECT_FALSE(small.exhausted());
}

// A busy channel: 1,000 updates per second for 30 s, delay 10 s, bucket 1 s.
// The line never holds more than delay / bucket + 1 entries, and it delivers
// every field's final value.
TEST_F(DelayLineTest, ABusyChannelHoldsAtMostDelayOverBucketEntries) {
  size_t most = 0;
  uint64_t seq = 0;
  int64_t last_delivered = -1;
  for (uint64_t t = 0; t < 30 * kSec; t += kMs) {
    ASSERT_TRUE(line.record(int_field(22, static_cast<int64_t>(t / kMs)), false, ++seq, t));
    while (const DelayLine::Entry* e = line.due(t)) {
      last_delivered = field(*e, 22);
      line.pop();
    }
    most = std::max(most, line.size());
  }
  EXPECT_LE(most, 11u);
  EXPECT_GE(most, 10u);
  while (const DelayLine::Entry* e = line.due(UINT64_MAX)) {
    last_delivered = field(*e, 22);
    line.pop();
  }
  EXPECT_EQ(last_delivered, 29'999);
}

}  // namespace
}  // namespace tw::broker
