#include "perf/pacer.h"

#include <sys/prctl.h>

#include <cmath>

namespace tw::perf {

Pacer::Pacer(double rate_per_second, uint64_t start_ns)
    : interval_ns_(rate_per_second > 0 ? 1e9 / rate_per_second : 0), start_ns_(start_ns) {}

uint64_t Pacer::due_count(uint64_t now_ns) const {
  if (!paced()) return UINT64_MAX;
  if (now_ns < start_ns_) return 0;
  // floor(elapsed / interval) + 1, corrected for the rounding in due_ns().
  auto n = static_cast<uint64_t>(static_cast<double>(now_ns - start_ns_) / interval_ns_) + 1;
  while (n > 0 && due_ns(n - 1) > now_ns) --n;
  while (due_ns(n) <= now_ns) ++n;
  return n;
}

void Pacer::note_sent(uint64_t index, uint64_t sent_ns) {
  uint64_t due = due_ns(index);
  if (sent_ns > due && sent_ns - due > max_lateness_ns_) max_lateness_ns_ = sent_ns - due;
}

bool Pacer::saturated(uint64_t sent, uint64_t end_ns) const {
  if (!paced()) return false;
  uint64_t due = due_count(end_ns);
  return static_cast<double>(sent) < 0.9 * static_cast<double>(due);
}

void use_precise_timers() { prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); }

}  // namespace tw::perf
