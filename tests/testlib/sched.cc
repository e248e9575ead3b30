#include "testlib/sched.h"

#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>

namespace tw::testing {

bool kernel_has_custom_slices() {
  utsname u{};
  int major = 0, minor = 0;
  if (uname(&u) != 0 || std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return false;
  return major > 6 || (major == 6 && minor >= 12);
}

std::optional<uint64_t> slice_ns_of(pid_t tid) {
  uint64_t attr[6] = {};  // struct sched_attr, first version: 48 bytes; runtime at byte 24
  if (syscall(SYS_sched_getattr, tid, attr, sizeof attr, 0) != 0) return std::nullopt;
  return attr[3];
}

}  // namespace tw::testing
