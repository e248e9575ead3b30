#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "store/log.h"
#include "store/store_dir.h"

namespace tw::store {
namespace {

using testing::bytes;
using testing::StoreDir;
using testing::text;

std::unique_ptr<Log> open_log(const StoreDir& dir, LogOptions options = {}, Recovery* recovery = nullptr) {
  auto log = Log::open(dir.path(), options, recovery);
  EXPECT_TRUE(log) << log.error().message;
  return log ? std::move(*log) : nullptr;
}

struct Seen {
  uint64_t seq;
  uint64_t timestamp_ns;
  std::string topic;
  std::string payload;
};

std::vector<Seen> read_all(Log& log, uint64_t from = 0) {
  std::vector<Seen> seen;
  Status read = log.read(from, [&](const Record& r) {
    seen.push_back({r.seq, r.timestamp_ns, std::string(r.topic), text(r.payload)});
    return true;
  });
  EXPECT_TRUE(read) << read.error().message;
  return seen;
}

std::string payload_of(uint64_t i) { return "message " + std::to_string(i) + std::string(i % 50, 'x'); }

// Appends messages 1..n (timestamps 1000 * i), syncing every `per_sync`.
void append_n(Log& log, uint64_t n, uint64_t per_sync = 1) {
  for (uint64_t i = 1; i <= n; ++i) {
    auto seq = log.append(1000 * i, 0, "T/" + std::to_string(i % 7), bytes(payload_of(i)));
    ASSERT_TRUE(seq) << seq.error().message;
    ASSERT_EQ(*seq, log.next_seq() - 1);
    if (i % per_sync == 0) {
      ASSERT_TRUE(log.sync());
    }
  }
  ASSERT_TRUE(log.sync());
}

TEST(Log, SequenceNumbersStartAtOneAndRecordsReadBackInOrder) {
  StoreDir dir("basic");
  auto log = open_log(dir);
  EXPECT_EQ(log->next_seq(), 1u);
  append_n(*log, 100, 10);
  auto seen = read_all(*log);
  ASSERT_EQ(seen.size(), 100u);
  for (uint64_t i = 1; i <= 100; ++i) {
    EXPECT_EQ(seen[i - 1].seq, i);
    EXPECT_EQ(seen[i - 1].payload, payload_of(i));
    EXPECT_EQ(seen[i - 1].topic, "T/" + std::to_string(i % 7));
  }
}

TEST(Log, OnlySyncMakesAppendsDurable) {
  StoreDir dir("durable");
  auto log = open_log(dir);
  ASSERT_TRUE(log->append(1, 0, "T/a", bytes("one")));
  ASSERT_TRUE(log->append(2, 0, "T/a", bytes("two")));
  EXPECT_EQ(log->durable_seq(), 1u) << "nothing below 1: nothing durable yet";
  ASSERT_TRUE(log->sync());
  EXPECT_EQ(log->durable_seq(), 3u);
}

TEST(Log, SegmentsRollAtTheirSizeAndReadsFromAnySequenceCrossThem) {
  StoreDir dir("roll");
  auto log = open_log(dir, {.segment_bytes = 4096, .index_interval = 512});
  append_n(*log, 500, 7);
  EXPECT_GT(log->segment_count(), 5u);
  for (auto& entry : std::filesystem::directory_iterator(dir.path())) {
    if (entry.path().extension() == ".log") {
      EXPECT_LE(entry.file_size(), 4096u) << entry.path();
    }
  }
  for (uint64_t from : {1ull, 2ull, 77ull, 250ull, 499ull, 500ull}) {
    auto seen = read_all(*log, from);
    ASSERT_EQ(seen.size(), 501 - from) << "from " << from;
    EXPECT_EQ(seen.front().seq, from);
    EXPECT_EQ(seen.back().seq, 500u);
  }
  EXPECT_TRUE(read_all(*log, 501).empty());
}

TEST(Log, AReadStopsWhenTheVisitorSaysSo) {
  StoreDir dir("stop");
  auto log = open_log(dir, {.segment_bytes = 2048, .index_interval = 256});
  append_n(*log, 200);
  std::vector<uint64_t> seqs;
  ASSERT_TRUE(log->read(50, [&](const Record& r) {
    seqs.push_back(r.seq);
    return seqs.size() < 10;
  }));
  ASSERT_EQ(seqs.size(), 10u);
  EXPECT_EQ(seqs.front(), 50u);
  EXPECT_EQ(seqs.back(), 59u);
}

TEST(Log, AReadFromATimeFindsTheFirstRecordAtOrAfterIt) {
  StoreDir dir("time");
  auto log = open_log(dir, {.segment_bytes = 4096, .index_interval = 512});
  append_n(*log, 300);
  EXPECT_EQ(*log->seq_at_time(0), 1u);
  EXPECT_EQ(*log->seq_at_time(1000 * 123), 123u);
  EXPECT_EQ(*log->seq_at_time(1000 * 123 - 1), 123u);
  EXPECT_EQ(*log->seq_at_time(1000 * 123 + 1), 124u);
  EXPECT_EQ(*log->seq_at_time(1000 * 301), 301u) << "after the last: the next sequence";
}

TEST(Log, TimeNeverGoesBackInTheLog) {
  StoreDir dir("clock");
  auto log = open_log(dir);
  ASSERT_TRUE(log->append(5000, 0, "T/a", bytes("late clock")));
  ASSERT_TRUE(log->append(4000, 0, "T/a", bytes("the clock stepped back")));
  ASSERT_TRUE(log->sync());
  auto seen = read_all(*log);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].timestamp_ns, 5000u);
}

TEST(Log, ReopenedItHoldsTheSameRecordsAndGoesOnFromTheNextSequence) {
  StoreDir dir("reopen");
  {
    auto log = open_log(dir, {.segment_bytes = 4096, .index_interval = 512});
    append_n(*log, 250, 3);
  }
  Recovery recovery;
  auto log = open_log(dir, {.segment_bytes = 4096, .index_interval = 512}, &recovery);
  EXPECT_EQ(recovery.first_seq, 1u);
  EXPECT_EQ(recovery.next_seq, 251u);
  EXPECT_FALSE(recovery.cut.has_value());
  EXPECT_EQ(read_all(*log).size(), 250u);
  auto seq = log->append(1, 0, "T/a", bytes("after"));
  ASSERT_TRUE(seq);
  EXPECT_EQ(*seq, 251u);
}

TEST(Log, WholeSegmentsAreDroppedBelowTheAcknowledgementFloorNeverTheLast) {
  StoreDir dir("floor");
  auto log = open_log(dir, {.segment_bytes = 4096, .index_interval = 512});
  append_n(*log, 400);
  const size_t before = log->segment_count();
  EXPECT_EQ(log->drop_before(1), 0u);
  const size_t dropped = log->drop_before(200);
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(log->segment_count(), before - dropped);
  EXPECT_LE(log->first_seq(), 200u) << "a segment holding 200 is kept whole";
  auto seen = read_all(*log);
  EXPECT_EQ(seen.front().seq, log->first_seq());
  EXPECT_EQ(seen.back().seq, 400u);
  log->drop_before(1'000'000);
  EXPECT_EQ(log->segment_count(), 1u) << "the last segment stays";
}

TEST(Log, RetentionByBytesRecordsAndAge) {
  StoreDir dir("retention");
  auto log = open_log(dir, {.segment_bytes = 4096, .index_interval = 512});
  append_n(*log, 400);
  EXPECT_EQ(log->apply({}, 0), 0u) << "no bounds: nothing dropped";
  log->apply({.max_bytes = 10'000}, 0);
  EXPECT_LE(log->bytes(), 10'000u + 4096u);
  log->apply({.max_records = 50}, 0);
  EXPECT_LE(log->next_seq() - log->first_seq(), 50u + 100u);
  log->apply({.max_age_ns = 1000}, 1000 * 400 + 1'000'000);
  EXPECT_EQ(log->segment_count(), 1u);
}

}  // namespace
}  // namespace tw::store
