// The process_* families that every Prometheus client library exports (its
// "process collector"), under the same names, so that an operator's existing
// dashboards and alerts work unchanged: read from /proc/self at each scrape.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "admin/metrics.h"

namespace tw::admin {

struct ProcessStats {
  double cpu_seconds = 0;         // user + system
  uint64_t resident_bytes = 0;
  uint64_t virtual_bytes = 0;
  uint64_t open_fds = 0;
  uint64_t max_fds = 0;           // the soft RLIMIT_NOFILE
  double start_time_seconds = 0;  // since the Unix epoch
};

// Parses the text of /proc/<pid>/stat; `boot_time_s` is /proc/stat's btime.
std::optional<ProcessStats> parse_proc_stat(std::string_view stat, uint64_t boot_time_s, long ticks_per_s,
                                            long page_size);
// This process's, now; nullopt where /proc cannot be read.
std::optional<ProcessStats> read_process_stats();

void write_process_metrics(PromText& out, const ProcessStats& stats);

}  // namespace tw::admin
