// A log-linear latency histogram in the style of HdrHistogram.
//
// Values are uint64 nanoseconds. Values below 2048 get a bucket each; above,
// every power of two [2^k, 2^(k+1)) is split into 1024 equal buckets, so a
// bucket is never wider than 1/1024 of its lower bound (< 0.1%) and reported
// values (the bucket's midpoint) are within 0.05% of the recorded ones.
// Range 0 .. kMaxValue (2^42 - 1 ns, about 73 minutes); larger values are
// recorded as kMaxValue and counted in clamped().
//
// record() is O(1) and never allocates; the ~270 KiB of counters are
// allocated once by the constructor. Percentiles, merge() and reset() touch
// only the buckets between min() and max(): a subscriber that closes an
// interval every second mid-run does not sweep all 270 KiB each time.
// Not thread-safe: one owner.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tw::perf {

class Histogram {
 public:
  static constexpr int kLinearBits = 11;                          // 2048 exact buckets
  static constexpr uint64_t kLinearCount = 1ull << kLinearBits;
  static constexpr uint64_t kHalfCount = kLinearCount / 2;        // buckets per power of two
  static constexpr int kMaxBits = 42;
  static constexpr uint64_t kMaxValue = (1ull << kMaxBits) - 1;
  static constexpr size_t kBucketCount = kLinearCount + (kMaxBits - kLinearBits) * kHalfCount;

  Histogram();

  void record(uint64_t value) {
    if (value > kMaxValue) {
      value = kMaxValue;
      ++clamped_;
    }
    ++counts_[bucket_of(value)];
    ++count_;
    sum_ += static_cast<double>(value);
    sum_squares_ += static_cast<double>(value) * static_cast<double>(value);
    if (value < min_) min_ = value;
    if (value > max_) max_ = value;
  }

  uint64_t count() const { return count_; }
  uint64_t clamped() const { return clamped_; }
  uint64_t min() const { return count_ ? min_ : 0; }
  uint64_t max() const { return max_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  double stddev() const;  // population standard deviation, from exact sums (not buckets)
  // Values recorded at or below `value`, counted whole buckets at a time: a
  // bucket that straddles `value` counts when its midpoint does not exceed it.
  uint64_t count_at_or_below(uint64_t value) const;
  // The value v such that p percent of the recorded values are <= v
  // (rank ceil(p/100 * count)), within the bucket precision; p in [0, 100].
  // 0 when empty; p = 0 gives min(), p = 100 gives max().
  uint64_t value_at_percentile(double p) const;

  void merge(const Histogram& other);
  void reset();

  static size_t bucket_of(uint64_t value) {
    if (value < kLinearCount) return static_cast<size_t>(value);
    int msb = 63 - __builtin_clzll(value);          // >= kLinearBits
    int shift = msb - (kLinearBits - 1);            // keeps the top 11 bits
    uint64_t sub = (value >> shift) - kHalfCount;   // 0 .. 1023
    return static_cast<size_t>(kLinearCount + static_cast<uint64_t>(msb - kLinearBits) * kHalfCount + sub);
  }
  static uint64_t bucket_low(size_t bucket);
  static uint64_t bucket_width(size_t bucket);

 private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t clamped_ = 0;
  double sum_ = 0;
  double sum_squares_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

}  // namespace tw::perf
