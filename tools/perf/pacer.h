// A fixed-rate schedule: message i is due at start + i / rate.
//
// The schedule never slips: a message sent late keeps its intended time, so a
// stalled sender produces a burst afterwards and the receiver measures the
// latency a message really had from when it should have left (no coordinated
// omission). Rate 0 means no pacing: every message is due at once.
//
// The pacer only computes times and accounts lateness; waiting is done by
// wait_until(), which hands long waits to the caller (the transport's poll,
// so output is flushed and heartbeats answered) and spins only at the end.
#pragma once
#include <cstdint>
#include <ctime>

#include "perf/probe.h"

namespace tw::perf {

class Pacer {
 public:
  Pacer(double rate_per_second, uint64_t start_ns);

  bool paced() const { return interval_ns_ > 0; }
  // Intended send time of message `index` (0-based); start for rate 0.
  uint64_t due_ns(uint64_t index) const {
    return start_ns_ + static_cast<uint64_t>(static_cast<double>(index) * interval_ns_);
  }
  // Messages due by `now` (those with due_ns <= now); huge when unpaced.
  uint64_t due_count(uint64_t now_ns) const;

  // Records that message `index` left at `sent_ns`.
  void note_sent(uint64_t index, uint64_t sent_ns);
  uint64_t max_lateness_ns() const { return max_lateness_ns_; }
  // Fell behind by more than 10%: fewer than 90% of the messages due by `end_ns`
  // were sent (`sent` counts them). Never true when unpaced.
  bool saturated(uint64_t sent, uint64_t end_ns) const;

 private:
  double interval_ns_ = 0;
  uint64_t start_ns_ = 0;
  uint64_t max_lateness_ns_ = 0;
};

// Asks the kernel to wake this thread's timed sleeps on time: the default
// 50 µs timer slack would make a paced sender late, and at a fixed rate that
// lateness is (rightly) counted as latency.
void use_precise_timers();

// Below this much time left, wait_until() spins instead of sleeping: a wake-up
// from nanosleep is tens of microseconds late on a busy VM.
inline constexpr uint64_t kSpinNs = 50'000;

// Waits until clock_now_ns(clock) >= target_ns. Waits longer than a
// millisecond (plus the spin) go to idle(timeout_ms); shorter ones sleep with
// nanosleep down to the spin window; the last spin_ns are spun. A wait whose
// lateness is not measured passes spin_ns 0 and leaves the CPU to others.
template <typename Idle>
void wait_until(uint64_t target_ns, ClockKind clock, uint64_t spin_ns, Idle&& idle) {
  for (;;) {
    uint64_t now = clock_now_ns(clock);
    if (now >= target_ns) return;
    uint64_t left = target_ns - now;
    if (left > spin_ns + 1'000'000) {
      idle(static_cast<int>((left - spin_ns) / 1'000'000));
    } else if (left > spin_ns) {
      timespec ts{0, static_cast<long>(left - spin_ns)};
      nanosleep(&ts, nullptr);
    } else {
      __builtin_ia32_pause();
    }
  }
}

}  // namespace tw::perf
