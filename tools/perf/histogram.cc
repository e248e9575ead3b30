#include "perf/histogram.h"

#include <algorithm>
#include <cmath>

namespace tw::perf {

Histogram::Histogram() : counts_(kBucketCount, 0) {}

uint64_t Histogram::bucket_low(size_t bucket) {
  if (bucket < kLinearCount) return bucket;
  uint64_t above = bucket - kLinearCount;
  int shift = static_cast<int>(above / kHalfCount) + 1;
  return (kHalfCount + above % kHalfCount) << shift;
}

uint64_t Histogram::bucket_width(size_t bucket) {
  if (bucket < kLinearCount) return 1;
  return 1ull << ((bucket - kLinearCount) / kHalfCount + 1);
}

uint64_t Histogram::value_at_percentile(double p) const {
  if (count_ == 0) return 0;
  if (p <= 0) return min();
  if (p >= 100) return max_;
  auto rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  const size_t last = bucket_of(max_);
  for (size_t b = bucket_of(min_); b <= last; ++b) {
    seen += counts_[b];
    if (seen >= rank) {
      uint64_t mid = bucket_low(b) + bucket_width(b) / 2;
      return std::clamp(mid, min(), max_);
    }
  }
  return max_;
}

double Histogram::stddev() const {
  if (count_ == 0) return 0;
  double n = static_cast<double>(count_);
  double mean = sum_ / n;
  return std::sqrt(std::max(0.0, sum_squares_ / n - mean * mean));
}

uint64_t Histogram::count_at_or_below(uint64_t value) const {
  if (count_ == 0 || value < min()) return 0;
  if (value >= max_) return count_;
  uint64_t seen = 0;
  for (size_t b = bucket_of(min_); b <= bucket_of(max_) && bucket_low(b) + bucket_width(b) / 2 <= value; ++b)
    seen += counts_[b];
  return seen;
}

void Histogram::merge(const Histogram& other) {
  if (other.count_ == 0) return;
  const size_t last = bucket_of(other.max_);
  for (size_t b = bucket_of(other.min_); b <= last; ++b) counts_[b] += other.counts_[b];
  count_ += other.count_;
  clamped_ += other.clamped_;
  sum_ += other.sum_;
  sum_squares_ += other.sum_squares_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void Histogram::reset() {
  if (count_ != 0) {
    std::fill(counts_.begin() + static_cast<ptrdiff_t>(bucket_of(min_)),
              counts_.begin() + static_cast<ptrdiff_t>(bucket_of(max_)) + 1, 0);
  }
  count_ = 0;
  clamped_ = 0;
  sum_ = 0;
  sum_squares_ = 0;
  min_ = UINT64_MAX;
  max_ = 0;
}

}  // namespace tw::perf
