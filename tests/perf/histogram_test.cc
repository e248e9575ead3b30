#include "perf/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace tw::perf {
namespace {

// The exact value at percentile p: rank ceil(p/100 * n) of the sorted values.
uint64_t exact_percentile(const std::vector<uint64_t>& sorted, double p) {
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

void expect_percentiles_close(const std::vector<uint64_t>& values) {
  Histogram h;
  for (uint64_t v : values) h.record(v);
  std::vector<uint64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (double p : {0.0, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0}) {
    auto exact = static_cast<double>(exact_percentile(sorted, p));
    auto got = static_cast<double>(h.value_at_percentile(p));
    EXPECT_LE(std::abs(got - exact), exact * 0.001 + 0.5) << "p" << p << " exact " << exact << " got " << got;
  }
  EXPECT_EQ(h.count(), values.size());
  EXPECT_EQ(h.min(), sorted.front());
  EXPECT_EQ(h.max(), sorted.back());
}

TEST(Histogram, UniformOneToOneMillion) {
  std::vector<uint64_t> values;
  for (uint64_t v = 1; v <= 1'000'000; ++v) values.push_back(v);
  expect_percentiles_close(values);
  Histogram h;
  for (uint64_t v : values) h.record(v);
  EXPECT_DOUBLE_EQ(h.mean(), 500'000.5);
}

TEST(Histogram, Constant) {
  Histogram h;
  for (int i = 0; i < 1000; ++i) h.record(123'456);
  for (double p : {0.0, 50.0, 99.9, 100.0}) EXPECT_EQ(h.value_at_percentile(p), 123'456u);
  EXPECT_DOUBLE_EQ(h.mean(), 123'456.0);
}

TEST(Histogram, ExponentialLike) {
  std::mt19937_64 rng(42);
  std::exponential_distribution<double> dist(1.0 / 20'000.0);  // mean 20 µs
  std::vector<uint64_t> values;
  for (int i = 0; i < 200'000; ++i) values.push_back(static_cast<uint64_t>(dist(rng)) + 1);
  expect_percentiles_close(values);
}

TEST(Histogram, Bimodal) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> fast(8'000.0, 500.0);
  std::normal_distribution<double> slow(3'000'000.0, 200'000.0);
  std::vector<uint64_t> values;
  for (int i = 0; i < 100'000; ++i) {
    double v = i % 10 == 0 ? slow(rng) : fast(rng);
    values.push_back(static_cast<uint64_t>(std::max(1.0, v)));
  }
  expect_percentiles_close(values);
}

TEST(Histogram, BucketsTileTheRangeWithoutHoles) {
  uint64_t expected_low = 0;
  for (size_t b = 0; b < Histogram::kBucketCount; ++b) {
    ASSERT_EQ(Histogram::bucket_low(b), expected_low) << "bucket " << b;
    ASSERT_EQ(Histogram::bucket_of(expected_low), b);
    uint64_t high = expected_low + Histogram::bucket_width(b) - 1;
    ASSERT_EQ(Histogram::bucket_of(high), b);
    // Precision: a bucket is at most 1/1024 of its lower bound wide.
    if (expected_low >= Histogram::kLinearCount) {
      ASSERT_LE(Histogram::bucket_width(b) * 1024, expected_low);
    }
    expected_low = high + 1;
  }
  EXPECT_EQ(expected_low - 1, Histogram::kMaxValue);
}

TEST(Histogram, MergeEqualsRecordingEverythingInOne) {
  Histogram a, b, all;
  for (uint64_t v = 1; v < 50'000; v += 7) {
    (v % 2 ? a : b).record(v * 13);
    all.record(v * 13);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_DOUBLE_EQ(a.mean(), all.mean());
  for (double p : {1.0, 50.0, 90.0, 99.0, 99.9}) EXPECT_EQ(a.value_at_percentile(p), all.value_at_percentile(p));
  Histogram empty;
  a.merge(empty);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
}

TEST(Histogram, EmptyAndReset) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.mean(), 0.0);
  EXPECT_EQ(h.value_at_percentile(50), 0u);
  h.record(5);
  h.record(5'000'000);
  h.reset();
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.value_at_percentile(99), 0u);
  h.record(77);
  EXPECT_EQ(h.min(), 77u);
  EXPECT_EQ(h.max(), 77u);
}

TEST(Histogram, ZeroAndHugeValues) {
  Histogram h;
  h.record(0);
  h.record(Histogram::kMaxValue);
  h.record(UINT64_MAX);  // clamped
  EXPECT_EQ(h.clamped(), 1u);
  EXPECT_EQ(h.count(), 3u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), Histogram::kMaxValue);
  EXPECT_EQ(h.value_at_percentile(100), Histogram::kMaxValue);
  EXPECT_EQ(h.value_at_percentile(10), 0u);
}

// reset() clears only the buckets between min and max: nothing recorded
// before a reset may show in the percentiles after it.
TEST(Histogram, ResetLeavesNoCountBehind) {
  Histogram h;
  for (int i = 0; i < 100; ++i) {
    h.record(500);
    h.record(3'000'000);
  }
  h.reset();
  h.record(100);
  h.record(900);
  h.record(9'000'000);
  EXPECT_EQ(h.value_at_percentile(34), 900u);
  EXPECT_NEAR(static_cast<double>(h.value_at_percentile(67)), 9e6, 9e6 / 1000);
  Histogram sum;
  sum.merge(h);
  EXPECT_EQ(sum.count(), 3u);
  EXPECT_EQ(sum.value_at_percentile(34), 900u);
}

}  // namespace
}  // namespace tw::perf
