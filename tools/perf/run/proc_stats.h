// CPU time of processes from /proc, and a description of the machine.
#pragma once
#include <sys/types.h>

#include <map>
#include <string>
#include <string_view>

#include "tickwire/base/result.h"

namespace tw::perf::run {

struct CpuTicks {
  unsigned long long utime = 0;  // clock ticks in user mode
  unsigned long long stime = 0;  // clock ticks in kernel mode
};

// Parses the text of /proc/<pid>/stat. The command name (field 2) may hold
// spaces and parentheses, so fields are counted after its last ')'.
Result<CpuTicks> parse_proc_stat(std::string_view text);

// utime + stime of a live process, in seconds.
Result<double> process_cpu_seconds(pid_t pid);

// The peak resident set (VmHWM) from the text of /proc/<pid>/status, in KiB.
Result<unsigned long long> parse_peak_rss_kib(std::string_view status);
Result<unsigned long long> peak_rss_kib(pid_t pid);

// utime + stime of each thread of a live process, in seconds, by thread name
// (threads of one name added together): the tiered broker names its loops.
std::map<std::string, double> thread_cpu_seconds(pid_t pid);

// The machine's CPU time from the first line of /proc/stat, in clock ticks:
// all of it, and the part "stolen" by the hypervisor for other guests (a
// vCPU that was runnable but not running), which on a shared VM is what
// makes one run's latency differ from the next.
struct MachineTicks {
  unsigned long long total = 0;
  unsigned long long steal = 0;
};
Result<MachineTicks> parse_machine_ticks(std::string_view proc_stat);
Result<MachineTicks> machine_ticks();
// Steal as a percentage of the CPU time between two readings; -1 if unknown.
double steal_percent(const Result<MachineTicks>& before, const Result<MachineTicks>& after);

struct MachineInfo {
  int cpus = 0;
  std::string cpu_model;
  std::string kernel;
  std::string hostname;
};
// "model name" from the text of /proc/cpuinfo; empty if absent.
std::string parse_cpu_model(std::string_view cpuinfo);
MachineInfo machine_info();

}  // namespace tw::perf::run
