// A process's CPU time sampled through a trial, so that the CPU it spent in
// any part of the trial can be read afterwards: the part that matters (up to
// the publishers' stop plus the drain bound) is known only once the
// publishers have reported when they stopped, after the fact.
#pragma once
#include <cstdint>
#include <vector>

namespace tw::perf::run {

class CpuTimeline {
 public:
  // One reading: the process's CPU seconds at CLOCK_MONOTONIC time at_ns.
  // Readings must come in time order; an out-of-order one is ignored.
  void add(uint64_t at_ns, double cpu_s);

  // CPU seconds spent between two times, read linearly between the samples
  // around each (/proc counts in 10 ms ticks: sampling finer buys nothing).
  // Times outside the sampled span are clamped to it; -1 with fewer than two
  // samples or from_ns > to_ns.
  double between(uint64_t from_ns, uint64_t to_ns) const;

  uint64_t first_ns() const { return samples_.empty() ? 0 : samples_.front().at_ns; }
  uint64_t last_ns() const { return samples_.empty() ? 0 : samples_.back().at_ns; }

 private:
  struct Sample {
    uint64_t at_ns;
    double cpu_s;
  };
  double cpu_at(uint64_t at_ns) const;

  std::vector<Sample> samples_;
};

}  // namespace tw::perf::run
