#include "admin/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tw::admin {

namespace {

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

uint64_t boot_time_s() {
  std::istringstream lines(read_file("/proc/stat"));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("btime ", 0) == 0) return std::stoull(line.substr(6));
  }
  return 0;
}

uint64_t open_fds() {
  std::error_code error;
  uint64_t count = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", error), end; !error && it != end; it.increment(error))
    ++count;
  return count > 0 ? count - 1 : 0;  // less the descriptor that lists the directory
}

uint64_t max_fds() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  return limit.rlim_cur;
}

}  // namespace

std::optional<ProcessStats> parse_proc_stat(std::string_view stat, uint64_t boot_time_s, long ticks_per_s,
                                            long page_size) {
  // The command name, in parentheses, may hold spaces and parentheses: fields
  // are counted from the last ')' (field 3, the state, follows it).
  const size_t name_end = stat.rfind(')');
  if (name_end == std::string_view::npos || ticks_per_s <= 0) return std::nullopt;
  std::vector<std::string_view> fields;  // fields[i] is field i + 3 of proc(5)
  for (size_t at = name_end + 1; at < stat.size();) {
    const size_t start = stat.find_first_not_of(" \n", at);
    if (start == std::string_view::npos) break;
    const size_t end = std::min(stat.find_first_of(" \n", start), stat.size());
    fields.push_back(stat.substr(start, end - start));
    at = end;
  }
  auto field = [&](size_t number) -> std::optional<uint64_t> {
    if (number < 3 || number - 3 >= fields.size()) return std::nullopt;
    uint64_t value = 0;
    const std::string_view text = fields[number - 3];
    if (std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc{}) return std::nullopt;
    return value;
  };
  const auto utime = field(14), stime = field(15), start = field(22), vsize = field(23), rss = field(24);
  if (!utime || !stime || !start || !vsize || !rss) return std::nullopt;
  ProcessStats s;
  const double ticks = static_cast<double>(ticks_per_s);
  s.cpu_seconds = static_cast<double>(*utime + *stime) / ticks;
  s.start_time_seconds = static_cast<double>(boot_time_s) + static_cast<double>(*start) / ticks;
  s.virtual_bytes = *vsize;
  s.resident_bytes = *rss * static_cast<uint64_t>(page_size);
  return s;
}

std::optional<ProcessStats> read_process_stats() {
  auto s = parse_proc_stat(read_file("/proc/self/stat"), boot_time_s(), sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE));
  if (!s) return std::nullopt;
  s->open_fds = open_fds();
  s->max_fds = max_fds();
  return s;
}

void write_process_metrics(PromText& out, const ProcessStats& s) {
  out.family("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.");
  out.sample("process_cpu_seconds_total", s.cpu_seconds);
  out.family("process_open_fds", "gauge", "Number of open file descriptors.");
  out.sample("process_open_fds", s.open_fds);
  if (s.max_fds > 0) {
    out.family("process_max_fds", "gauge", "Maximum number of open file descriptors.");
    out.sample("process_max_fds", s.max_fds);
  }
  out.family("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
  out.sample("process_virtual_memory_bytes", s.virtual_bytes);
  out.family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
  out.sample("process_resident_memory_bytes", s.resident_bytes);
  out.family("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.");
  out.sample("process_start_time_seconds", s.start_time_seconds);
}

}  // namespace tw::admin
