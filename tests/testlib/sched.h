// The scheduler as tests see it, read with the raw system calls, apart from
// the code under test (base/affinity.h): whether the kernel offers custom
// slices, and the slice a thread runs in.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace tw::testing {

// Custom slices for the fair policies came with Linux 6.12.
bool kernel_has_custom_slices();

// The slice of thread `tid` (0: the caller) as sched_getattr reports it, in
// ns; nullopt when the call fails.
std::optional<uint64_t> slice_ns_of(pid_t tid);

}  // namespace tw::testing
