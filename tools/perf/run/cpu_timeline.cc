#include "perf/run/cpu_timeline.h"

#include <algorithm>

namespace tw::perf::run {

void CpuTimeline::add(uint64_t at_ns, double cpu_s) {
  if (!samples_.empty() && at_ns <= samples_.back().at_ns) return;
  samples_.push_back({at_ns, cpu_s});
}

double CpuTimeline::cpu_at(uint64_t at_ns) const {
  at_ns = std::clamp(at_ns, first_ns(), last_ns());
  auto after = std::lower_bound(samples_.begin(), samples_.end(), at_ns,
                                [](const Sample& s, uint64_t t) { return s.at_ns < t; });
  if (after == samples_.begin()) return after->cpu_s;
  auto before = after - 1;
  double fraction = static_cast<double>(at_ns - before->at_ns) / static_cast<double>(after->at_ns - before->at_ns);
  return before->cpu_s + fraction * (after->cpu_s - before->cpu_s);
}

double CpuTimeline::between(uint64_t from_ns, uint64_t to_ns) const {
  if (samples_.size() < 2 || from_ns > to_ns) return -1;
  return cpu_at(to_ns) - cpu_at(from_ns);
}

}  // namespace tw::perf::run
