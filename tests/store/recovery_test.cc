// Recovery: the last segment's torn or corrupt tail is cut at the last whole
// record, and nothing before it is lost; sealed segments are trusted by their
// index, rebuilt without one, and refused when a record in them is bad.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include "store/log.h"
#include "store/store_dir.h"

namespace tw::store {
namespace {

using testing::bytes;
using testing::StoreDir;
using testing::text;
namespace fs = std::filesystem;

const LogOptions kSmall{.segment_bytes = 8192, .index_interval = 512};

std::string payload_of(uint64_t i) { return "m" + std::to_string(i) + std::string(i % 40, '.'); }

void write_log(const StoreDir& dir, uint64_t n) {
  auto log = Log::open(dir.path(), kSmall);
  EXPECT_TRUE(log);
  for (uint64_t i = 1; i <= n; ++i) EXPECT_TRUE((*log)->append(i, 0, "T/x", bytes(payload_of(i))));
  EXPECT_TRUE((*log)->sync());
}

std::vector<fs::path> segment_files(const StoreDir& dir, const char* extension) {
  std::vector<fs::path> files;
  for (auto& e : fs::directory_iterator(dir.path())) {
    if (e.path().extension() == extension) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The records read back must be 1..k, each whole and right; returns k.
uint64_t check_prefix(Log& log) {
  uint64_t expected = 1;
  Status read = log.read(1, [&](const Record& r) {
    EXPECT_EQ(r.seq, expected);
    EXPECT_EQ(text(r.payload), payload_of(r.seq));
    ++expected;
    return true;
  });
  EXPECT_TRUE(read) << read.error().message;
  return expected - 1;
}

TEST(Recovery, ATornTailIsCutAtTheLastWholeRecordWhereverTheTearFalls) {
  std::mt19937_64 random(20261202);
  for (int trial = 0; trial < 40; ++trial) {
    StoreDir dir("torn");
    write_log(dir, 300);
    const fs::path last = segment_files(dir, ".log").back();
    const uint64_t size = fs::file_size(last);
    const uint64_t at = random() % size;
    fs::resize_file(last, at);
    Recovery recovery;
    auto log = Log::open(dir.path(), kSmall, &recovery);
    ASSERT_TRUE(log) << log.error().message;
    const uint64_t kept = check_prefix(**log);
    EXPECT_EQ(recovery.next_seq, kept + 1);
    EXPECT_LT(kept, 300u);
    if (recovery.cut) {
      EXPECT_EQ(recovery.cut->why, "a torn record");
      EXPECT_EQ(recovery.cut->at_offset + recovery.cut->bytes, at);
    }
    EXPECT_EQ(fs::file_size(last), recovery.cut ? recovery.cut->at_offset : at) << "the cut is on disk";
    auto next = (*log)->append(1, 0, "T/x", bytes("after"));
    ASSERT_TRUE(next);
    EXPECT_EQ(*next, kept + 1) << "appends go on from the cut";
  }
}

TEST(Recovery, ACorruptByteInTheLastSegmentCutsFromItsRecordOn) {
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 40; ++trial) {
    StoreDir dir("corrupt");
    write_log(dir, 300);
    const fs::path last = segment_files(dir, ".log").back();
    const uint64_t at = random() % fs::file_size(last);
    {
      std::fstream f(last, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(static_cast<std::streamoff>(at));
      char c = 0;
      f.read(&c, 1);
      f.seekp(static_cast<std::streamoff>(at));
      c = static_cast<char>(c ^ (1 << (random() % 8)));
      f.write(&c, 1);
    }
    Recovery recovery;
    auto log = Log::open(dir.path(), kSmall, &recovery);
    ASSERT_TRUE(log) << log.error().message;
    ASSERT_TRUE(recovery.cut.has_value()) << "a flipped bit is always found (offset " << at << ")";
    EXPECT_LE(recovery.cut->at_offset, at);
    const uint64_t kept = check_prefix(**log);
    EXPECT_EQ(recovery.next_seq, kept + 1);
  }
}

TEST(Recovery, SealedSegmentsAreTrustedByTheirIndexAndRebuiltWithoutOne) {
  StoreDir dir("sealed");
  write_log(dir, 600);
  auto indexes = segment_files(dir, ".index");
  ASSERT_GE(indexes.size(), 3u);
  fs::remove(indexes[1]);
  {
    std::ofstream stale(indexes[2], std::ios::binary | std::ios::trunc);
    stale << "not an index";
  }
  auto log = Log::open(dir.path(), kSmall);
  ASSERT_TRUE(log) << log.error().message;
  EXPECT_EQ(check_prefix(**log), 600u);
  EXPECT_TRUE(fs::exists(indexes[1])) << "rebuilt";
  EXPECT_GT(fs::file_size(indexes[2]), 40u) << "rewritten";
  EXPECT_EQ(*(*log)->seq_at_time(321), 321u) << "the rebuilt indexes serve reads";
}

TEST(Recovery, ABadRecordInASealedSegmentIsRefusedNotCut) {
  StoreDir dir("sealedbad");
  write_log(dir, 600);
  auto logs = segment_files(dir, ".log");
  ASSERT_GE(logs.size(), 3u);
  fs::remove(segment_files(dir, ".index")[0]);  // read record by record, then
  fs::resize_file(logs[0], fs::file_size(logs[0]) - 3);
  auto log = Log::open(dir.path(), kSmall);
  ASSERT_FALSE(log);
  EXPECT_NE(log.error().message.find("a torn record"), std::string::npos) << log.error().message;
  EXPECT_NE(log.error().message.find("of a sealed segment"), std::string::npos) << log.error().message;
}

TEST(Recovery, AMissingSegmentIsAGapThatIsReportedNotSkipped) {
  StoreDir dir("gap");
  write_log(dir, 600);
  auto logs = segment_files(dir, ".log");
  ASSERT_GE(logs.size(), 3u);
  fs::remove(logs[1]);
  auto log = Log::open(dir.path(), kSmall);
  ASSERT_FALSE(log);
  EXPECT_NE(log.error().message.find("are missing"), std::string::npos) << log.error().message;
}

}  // namespace
}  // namespace tw::store
