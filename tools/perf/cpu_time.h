// CPU time used by this process (all threads: libnats runs its own).
#pragma once

namespace tw::perf {

// User + system seconds since the process started, from getrusage(RUSAGE_SELF).
double process_cpu_seconds();

}  // namespace tw::perf
