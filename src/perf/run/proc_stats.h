// CPU time of processes from /proc, and a description of the machine.
#pragma once
#include <sys/types.h>

#include <string>
#include <string_view>

#include "base/result.h"

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
