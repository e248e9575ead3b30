// Thread placement: cpu lists as Linux writes them ("2-7", "0,2,4-6"),
// pinning a thread to one cpu, and which NUMA node a cpu belongs to. Used at
// start-up only, when the broker's loop threads are created (issue 5), and by
// config validation for the `cpus` key.
//
// libnuma is optional at build time (TW_HAVE_NUMA): without it, or on a
// kernel without NUMA, every cpu's node is unknown (-1) and placement is
// described without nodes.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tickwire/base/result.h"

namespace tw {

// The highest cpu number a list may name: one cpu_set_t (CPU_SETSIZE) holds 0..1023.
inline constexpr int kMaxCpuNumber = 1023;

// Parses a Linux cpu list: comma-separated cpu numbers and ascending ranges
// ("2-7", "0,2,4-6"), no spaces. Cpus come back in the order written, ranges
// expanded. The error names the bad part: "'7-2': range runs backwards",
// "cpu 3 listed twice". An empty list is an error (callers treat "" as
// "no pinning" before parsing).
Result<std::vector<int>> parse_cpu_list(std::string_view text);

// Restricts the calling thread to `cpu`. The error names the cpu and errno:
// "cannot pin thread to cpu 9: Invalid argument (errno 22)".
Status pin_current_thread(int cpu);

// True when built with libnuma and the kernel supports NUMA (numa_available()).
bool numa_supported();

// The NUMA node of `cpu`, or -1 when NUMA is not supported or the cpu unknown.
int numa_node_of_cpu(int cpu);

// The NUMA nodes the cpus are on, sorted, each once; empty when unknown.
std::vector<int> numa_nodes_of(const std::vector<int>& cpus);

// One line for the start-up log: "cpus 2,3 on NUMA node 0", "cpus 2,9 across
// NUMA nodes 0,1 (cross-node traffic)", "cpu 2 (NUMA node unknown)", or
// "no cpu pinning" for an empty list.
std::string describe_placement(const std::vector<int>& cpus);

// The shortest and longest slice the kernel accepts for a custom slice.
inline constexpr uint32_t kMinSliceUs = 100;
inline constexpr uint32_t kMaxSliceUs = 100'000;

// Asks the scheduler to run the calling thread in slices of `slice_us`
// (kMinSliceUs..kMaxSliceUs; an EEVDF custom slice, Linux 6.12 and later),
// keeping its policy and nice value. A thread with a short slice has an early
// deadline, so when input wakes it on a cpu where another task is running, it
// runs at once instead of after the other task's slice (0.7 ms or more). It
// changes nothing while the thread has its cpu to itself. Returns the slice
// the kernel reports afterwards, in µs: 0 on a kernel without custom slices,
// which accepts the request and ignores it. Fails, naming the reason, for a
// thread under a real-time policy or when the kernel refuses.
Result<uint32_t> set_current_thread_slice(uint32_t slice_us);

// Lowers the calling thread's priority to `niceness` (per thread on Linux:
// the loops keep theirs and preempt it), for the broker's helper threads
// (TLS handshakes, password checks, HTTP). On failure logs one WARN naming
// `role` ("HTTP thread") and returns false: the thread then competes with the loops as an equal.
bool lower_current_thread_priority(int niceness, std::string_view role);

// Names the calling thread for top/ps/gdb; Linux keeps 15 bytes, so the
// name is truncated to that. Failure is harmless and ignored.
void name_current_thread(std::string_view name);

}  // namespace tw
