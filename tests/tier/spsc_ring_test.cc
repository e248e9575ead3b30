// SpscRing: the lock-free ring two reactor threads share. Single-thread tests
// pin down the protocol (reserve/commit, read/release, wrap by skip marker,
// full ring); the stress test runs a real producer and consumer thread.
#include "tier/spsc_ring.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <thread>
#include <vector>

namespace tw::tier {
namespace {

// Deterministic bytes for record `n` of `size` bytes.
uint8_t pattern_byte(uint64_t n, size_t i) { return static_cast<uint8_t>(n * 131 + i * 7 + 3); }

bool push(SpscRing& ring, uint64_t n, size_t size) {
  auto space = ring.reserve(size);
  if (space.empty()) return false;
  EXPECT_EQ(space.size(), size);
  for (size_t i = 0; i < size; ++i) space[i] = pattern_byte(n, i);
  ring.commit(size);
  return true;
}

void expect_record(std::span<const uint8_t> got, uint64_t n, size_t size) {
  ASSERT_EQ(got.size(), size) << "record " << n;
  for (size_t i = 0; i < size; ++i) {
    ASSERT_EQ(got[i], pattern_byte(n, i)) << "record " << n << " byte " << i;
  }
}

TEST(SpscRing, CapacityIsAPowerOfTwoOfAtLeastFourKiB) {
  EXPECT_EQ(SpscRing(1).capacity(), 4096u);
  EXPECT_EQ(SpscRing(4096).capacity(), 4096u);
  EXPECT_EQ(SpscRing(5000).capacity(), 8192u);
}

TEST(SpscRing, EmptyRingReadsNothing) {
  SpscRing ring(4096);
  EXPECT_TRUE(ring.empty());
  EXPECT_TRUE(ring.read().empty());
}

TEST(SpscRing, RecordsComeOutInOrderWithTheirBytes) {
  SpscRing ring(4096);
  ASSERT_TRUE(push(ring, 1, 5));
  ASSERT_TRUE(push(ring, 2, 17));
  ASSERT_TRUE(push(ring, 3, 1));
  EXPECT_FALSE(ring.empty());
  expect_record(ring.read(), 1, 5);
  expect_record(ring.read(), 2, 17);
  expect_record(ring.read(), 3, 1);
  EXPECT_TRUE(ring.read().empty());
  EXPECT_TRUE(ring.empty());
  ring.release();
}

TEST(SpscRing, ReservedButUncommittedRecordIsInvisible) {
  SpscRing ring(4096);
  auto space = ring.reserve(10);
  ASSERT_FALSE(space.empty());
  EXPECT_TRUE(ring.empty());
  EXPECT_TRUE(ring.read().empty());
  ring.commit(10);
  EXPECT_FALSE(ring.empty());
}

TEST(SpscRing, CommitMayShortenTheReservation) {
  SpscRing ring(4096);
  auto space = ring.reserve(100);
  ASSERT_EQ(space.size(), 100u);
  std::memcpy(space.data(), "abc", 3);
  ring.commit(3);
  ASSERT_TRUE(push(ring, 9, 4));
  auto first = ring.read();
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(std::memcmp(first.data(), "abc", 3), 0);
  expect_record(ring.read(), 9, 4);
}

TEST(SpscRing, FitsIsAQuarterOfTheRing) {
  SpscRing ring(4096);
  // slot = 4-byte length + size, rounded to 8; at most 1024 bytes.
  EXPECT_TRUE(ring.fits(1));
  EXPECT_TRUE(ring.fits(1020));
  EXPECT_FALSE(ring.fits(1021));
  EXPECT_FALSE(ring.fits(4096));
  EXPECT_FALSE(ring.reserve(1021).size() > 0);
  EXPECT_EQ(ring.reserve(1020).size(), 1020u);
}

TEST(SpscRing, FullRingRefusesUntilTheConsumerReleases) {
  SpscRing ring(4096);
  // 56-byte records take 64-byte slots: exactly 64 fit.
  int pushed = 0;
  while (push(ring, static_cast<uint64_t>(pushed), 56)) ++pushed;
  EXPECT_EQ(pushed, 64);
  EXPECT_TRUE(ring.reserve(1).empty());

  // Reading without releasing frees nothing.
  expect_record(ring.read(), 0, 56);
  expect_record(ring.read(), 1, 56);
  EXPECT_TRUE(ring.reserve(56).empty());

  ring.release();
  ASSERT_TRUE(push(ring, 64, 56));
  ASSERT_TRUE(push(ring, 65, 56));
  EXPECT_TRUE(ring.reserve(56).empty());

  for (uint64_t n = 2; n < 66; ++n) expect_record(ring.read(), n, 56);
  EXPECT_TRUE(ring.read().empty());
}

TEST(SpscRing, ReadWithoutReleaseKeepsTheBytesValid) {
  SpscRing ring(4096);
  ASSERT_TRUE(push(ring, 7, 900));
  ASSERT_TRUE(push(ring, 8, 900));
  ASSERT_TRUE(push(ring, 9, 900));
  auto first = ring.read();
  auto second = ring.read();
  // The producer cannot reuse unreleased space, so these views stay intact.
  while (!ring.reserve(900).empty()) ring.commit(900);
  expect_record(first, 7, 900);
  expect_record(second, 8, 900);
}

// A record that does not fit before the end leaves a skip marker and starts
// at offset 0; the consumer follows it transparently.
TEST(SpscRing, RecordThatCrossesTheEndWrapsToTheStart) {
  SpscRing ring(4096);
  // Four 1000-byte records (1008-byte slots) put the tail at 4032: 64 bytes left.
  for (uint64_t n = 0; n < 4; ++n) ASSERT_TRUE(push(ring, n, 1000));
  auto first = ring.read();
  expect_record(first, 0, 1000);
  for (uint64_t n = 1; n < 4; ++n) expect_record(ring.read(), n, 1000);
  ring.release();
  // A 100-byte record (104-byte slot) does not fit in the last 64 bytes.
  ASSERT_TRUE(push(ring, 4, 100));
  auto wrapped = ring.read();
  expect_record(wrapped, 4, 100);
  EXPECT_EQ(wrapped.data(), first.data()) << "the wrapped record must start at offset 0";
  ASSERT_TRUE(push(ring, 5, 10));
  auto next = ring.read();
  expect_record(next, 5, 10);
  EXPECT_EQ(next.data(), wrapped.data() + 104);
  EXPECT_TRUE(ring.read().empty());
}

TEST(SpscRing, WrapNeedsRoomForTheSkippedBytesToo) {
  SpscRing ring(4096);
  for (uint64_t n = 0; n < 4; ++n) ASSERT_TRUE(push(ring, n, 1000));  // tail at 4032
  // Free only the first record: 1008 bytes at the start, 64 at the end.
  expect_record(ring.read(), 0, 1000);
  ring.release();
  // 64 skipped + 1016 > 1072 free: refused, and nothing is disturbed.
  EXPECT_TRUE(ring.reserve(1012).empty());
  // 64 skipped + 1008 = 1072: fits exactly, at offset 0.
  ASSERT_TRUE(push(ring, 4, 1004));
  EXPECT_TRUE(ring.reserve(1).empty());
  for (uint64_t n = 1; n < 4; ++n) expect_record(ring.read(), n, 1000);
  expect_record(ring.read(), 4, 1004);
  EXPECT_TRUE(ring.read().empty());
}

// Many variable-size records through a small ring: the producer fills until
// refused, the consumer drains a few and releases, for many laps.
TEST(SpscRing, ManyVariableSizeRecordsWrapCorrectly) {
  SpscRing ring(4096);
  std::deque<std::pair<uint64_t, size_t>> in_flight;
  uint64_t next = 0, checked = 0;
  uint32_t rng = 12345;
  auto random = [&rng] {
    rng = rng * 1103515245u + 12345u;
    return rng >> 8;
  };
  while (checked < 50'000) {
    const size_t size = 1 + random() % 1020;  // 1..1020: every slot size, up to the limit
    while (push(ring, next, size)) {
      in_flight.emplace_back(next++, size);
    }
    ASSERT_FALSE(in_flight.empty()) << "an empty ring refused a record";
    const size_t take = 1 + random() % in_flight.size();
    for (size_t i = 0; i < take; ++i) {
      auto [n, sz] = in_flight.front();
      in_flight.pop_front();
      expect_record(ring.read(), n, sz);
      ++checked;
    }
    ring.release();
  }
  for (auto [n, sz] : in_flight) expect_record(ring.read(), n, sz);
  EXPECT_TRUE(ring.read().empty());
}

// --- two threads

struct StressRecord {
  uint64_t seq;
  uint32_t size;
  uint32_t checksum;
};

uint32_t checksum(std::span<const uint8_t> bytes) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (uint8_t b : bytes) h = (h ^ b) * 16777619u;
  return h;
}

TEST(SpscRing, TwoThreadStressKeepsOrderAndContent) {
  constexpr uint64_t kRecords = 1'000'000;
  SpscRing ring(4096 * 4);
  // Set by the consumer at the first bad record, so a broken ring fails the
  // test instead of leaving the producer waiting for space forever.
  std::atomic<bool> gave_up{false};

  std::thread producer([&ring, &gave_up] {
    uint32_t rng = 777;
    uint8_t body[300];
    for (uint64_t seq = 0; seq < kRecords; ++seq) {
      rng = rng * 1103515245u + 12345u;
      const size_t size = 1 + (rng >> 8) % 300;  // 1..300 bytes in all
      for (size_t i = 0; i < size; ++i) body[i] = pattern_byte(seq, i);
      std::span<uint8_t> space;
      while ((space = ring.reserve(sizeof(StressRecord) + size)).empty()) {
        if (gave_up.load()) return;
        std::this_thread::yield();
      }
      StressRecord h{seq, static_cast<uint32_t>(size), checksum({body, size})};
      std::memcpy(space.data(), &h, sizeof h);
      std::memcpy(space.data() + sizeof h, body, size);
      ring.commit(sizeof h + size);
    }
  });

  uint64_t received = 0, bad = 0;
  size_t unreleased = 0;
  while (received < kRecords) {
    auto rec = ring.read();
    if (rec.empty()) {
      ring.release();
      unreleased = 0;
      std::this_thread::yield();
      continue;
    }
    StressRecord h{};
    if (rec.size() >= sizeof h) std::memcpy(&h, rec.data(), sizeof h);
    auto body = rec.size() >= sizeof h ? rec.subspan(sizeof h) : rec.subspan(0, 0);
    const bool ok = rec.size() > sizeof h && h.seq == received && h.size == body.size() &&
                    h.checksum == checksum(body) && body.back() == pattern_byte(h.seq, body.size() - 1);
    if (!ok) {
      ADD_FAILURE() << "record " << received << ": got seq " << h.seq << ", " << rec.size() << " bytes";
      ++bad;
      gave_up.store(true);
      break;
    }
    ++received;
    if (++unreleased == 37) {  // release in batches, as a reactor turn does
      ring.release();
      unreleased = 0;
    }
  }
  ring.release();
  producer.join();
  EXPECT_EQ(bad, 0u);
  EXPECT_TRUE(ring.read().empty());
}

}  // namespace
}  // namespace tw::tier
