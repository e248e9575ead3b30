#include "perf/run/proc_stats.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace tw::perf::run {

namespace {

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

}  // namespace

Result<CpuTicks> parse_proc_stat(std::string_view text) {
  size_t close = text.rfind(')');
  if (close == std::string_view::npos) return Error{"malformed /proc stat: no ')'"};
  std::istringstream fields{std::string(text.substr(close + 1))};
  // After ')' come field 3 (state) .. ; utime and stime are fields 14 and 15.
  std::string field;
  CpuTicks ticks;
  for (int number = 3; number <= 15; ++number) {
    if (!(fields >> field)) return Error{"malformed /proc stat: too few fields"};
    if (number < 14) continue;
    unsigned long long value = 0;
    auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (error != std::errc() || end != field.data() + field.size())
      return Error{"malformed /proc stat: bad number " + field};
    (number == 14 ? ticks.utime : ticks.stime) = value;
  }
  return ticks;
}

Result<double> process_cpu_seconds(pid_t pid) {
  std::string text = read_whole_file("/proc/" + std::to_string(pid) + "/stat");
  if (text.empty()) return Error{"cannot read /proc/" + std::to_string(pid) + "/stat"};
  auto ticks = parse_proc_stat(text);
  if (!ticks) return ticks.error();
  static const double ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK));
  return static_cast<double>(ticks->utime + ticks->stime) / ticks_per_second;
}

Result<unsigned long long> parse_peak_rss_kib(std::string_view status) {
  size_t at = status.find("\nVmHWM:");
  if (at == std::string_view::npos) return Error{"no VmHWM line"};
  std::string_view rest = trim(status.substr(at + 7, status.find('\n', at + 1) - at - 7));
  unsigned long long kib = 0;
  auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), kib);
  if (error != std::errc() || trim(std::string_view(end, rest.data() + rest.size() - end)) != "kB")
    return Error{"malformed VmHWM line"};
  return kib;
}

Result<unsigned long long> peak_rss_kib(pid_t pid) {
  return parse_peak_rss_kib("\n" + read_whole_file("/proc/" + std::to_string(pid) + "/status"));
}

std::map<std::string, double> thread_cpu_seconds(pid_t pid) {
  static const double ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK));
  std::map<std::string, double> threads;
  std::error_code ignored;
  std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks, ignored)) {
    std::string text = read_whole_file(task.path() / "stat");
    size_t open = text.find('('), close = text.rfind(')');
    auto ticks = parse_proc_stat(text);
    if (open == std::string::npos || close == std::string::npos || !ticks) continue;  // the thread just ended
    threads[text.substr(open + 1, close - open - 1)] += static_cast<double>(ticks->utime + ticks->stime) / ticks_per_second;
  }
  return threads;
}

Result<MachineTicks> parse_machine_ticks(std::string_view proc_stat) {
  if (proc_stat.substr(0, 4) != "cpu ") return Error{"malformed /proc/stat: no cpu line"};
  std::istringstream fields{std::string(proc_stat.substr(4, proc_stat.find('\n') - 4))};
  // user nice system idle iowait irq softirq steal [guest guest_nice]: guest
  // time is already counted in user and nice, so the total stops at steal.
  MachineTicks ticks;
  unsigned long long value = 0;
  int count = 0;
  for (; count < 8 && fields >> value; ++count) {
    ticks.total += value;
    if (count == 7) ticks.steal = value;
  }
  if (count < 8) return Error{"malformed /proc/stat: too few cpu fields"};
  return ticks;
}

Result<MachineTicks> machine_ticks() { return parse_machine_ticks(read_whole_file("/proc/stat")); }

double steal_percent(const Result<MachineTicks>& before, const Result<MachineTicks>& after) {
  if (!before || !after || after->total <= before->total) return -1;
  return 100.0 * static_cast<double>(after->steal - before->steal) / static_cast<double>(after->total - before->total);
}

std::string parse_cpu_model(std::string_view cpuinfo) {
  while (!cpuinfo.empty()) {
    size_t end = cpuinfo.find('\n');
    std::string_view line = cpuinfo.substr(0, end);
    size_t colon = line.find(':');
    if (colon != std::string_view::npos && trim(line.substr(0, colon)) == "model name")
      return std::string(trim(line.substr(colon + 1)));
    if (end == std::string_view::npos) break;
    cpuinfo.remove_prefix(end + 1);
  }
  return {};
}

MachineInfo machine_info() {
  MachineInfo info;
  info.cpus = static_cast<int>(std::thread::hardware_concurrency());
  info.cpu_model = parse_cpu_model(read_whole_file("/proc/cpuinfo"));
  utsname names{};
  if (uname(&names) == 0) {
    info.kernel = std::string(names.sysname) + " " + names.release;
    info.hostname = names.nodename;
  }
  return info;
}

}  // namespace tw::perf::run
