#include "base/affinity.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cstring>

#include "base/log.h"

#ifdef TW_HAVE_NUMA
#include <numa.h>
#endif

namespace tw {
namespace {

static_assert(CPU_SETSIZE == kMaxCpuNumber + 1, "cpu lists are bounded by one cpu_set_t");

constexpr size_t kThreadNameMax = 15;  // TASK_COMM_LEN 16, less the terminator

Error bad_part(std::string_view part, std::string_view reason) {
  return Error{"'" + std::string(part) + "': " + std::string(reason)};
}

// A cpu number: digits only, at most kMaxCpuNumber. -1 when not a number.
int parse_cpu_number(std::string_view digits) {
  if (digits.empty() || digits.size() > 9) return -1;  // fits an int
  int value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

// One element, "N" or "N-M", appended to `cpus`.
Status append_element(std::string_view element, std::vector<int>& cpus) {
  if (element.empty()) return Error{"empty element (two commas, or a comma at an end)"};
  size_t dash = element.find('-');
  std::string_view first_text = element.substr(0, dash);
  std::string_view last_text =
      dash == std::string_view::npos ? first_text : element.substr(dash + 1);
  int first = parse_cpu_number(first_text);
  int last = parse_cpu_number(last_text);
  if (first < 0 || last < 0) return bad_part(element, "expected a cpu number or a range like 2-7");
  if (last > kMaxCpuNumber) {
    return bad_part(element, "cpu numbers go up to " + std::to_string(kMaxCpuNumber));
  }
  if (last < first) return bad_part(element, "range runs backwards");
  for (int cpu = first; cpu <= last; ++cpu) {
    if (std::find(cpus.begin(), cpus.end(), cpu) != cpus.end()) {
      return Error{"cpu " + std::to_string(cpu) + " listed twice"};
    }
    cpus.push_back(cpu);
  }
  return Ok{};
}

std::string join(const std::vector<int>& numbers) {
  std::string text;
  for (int number : numbers) {
    if (!text.empty()) text += ',';
    text += std::to_string(number);
  }
  return text;
}

}  // namespace

Result<std::vector<int>> parse_cpu_list(std::string_view text) {
  if (text.empty()) return Error{"empty cpu list"};
  std::vector<int> cpus;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string_view element = text.substr(start, comma - start);
    if (auto status = append_element(element, cpus); !status) return status.error();
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return cpus;
}

Status pin_current_thread(int cpu) {
  std::string what = "cannot pin thread to cpu " + std::to_string(cpu) + ": ";
  if (cpu < 0 || cpu > kMaxCpuNumber) {
    return Error{what + "cpu numbers go from 0 to " + std::to_string(kMaxCpuNumber)};
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  // Returns the error number itself; errno is not set.
  int error = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (error != 0) {
    return Error{what + std::strerror(error) + " (errno " + std::to_string(error) + ")"};
  }
  return Ok{};
}

bool numa_supported() {
#ifdef TW_HAVE_NUMA
  return numa_available() >= 0;  // must precede any other libnuma call
#else
  return false;
#endif
}

int numa_node_of_cpu(int cpu) {
  if (cpu < 0 || cpu > kMaxCpuNumber || !numa_supported()) return -1;
#ifdef TW_HAVE_NUMA
  return ::numa_node_of_cpu(cpu);  // libnuma's, not this function
#else
  (void)cpu;
  return -1;
#endif
}

std::vector<int> numa_nodes_of(const std::vector<int>& cpus) {
  std::vector<int> nodes;
  for (int cpu : cpus) {
    int node = numa_node_of_cpu(cpu);
    if (node >= 0 && std::find(nodes.begin(), nodes.end(), node) == nodes.end()) {
      nodes.push_back(node);
    }
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

std::string describe_placement(const std::vector<int>& cpus) {
  if (cpus.empty()) return "no cpu pinning";
  std::string text = (cpus.size() == 1 ? "cpu " : "cpus ") + join(cpus);
  const std::vector<int> nodes = numa_nodes_of(cpus);
  if (nodes.empty()) return text + " (NUMA node unknown)";
  if (nodes.size() == 1) return text + " on NUMA node " + std::to_string(nodes.front());
  return text + " across NUMA nodes " + join(nodes) + " (cross-node traffic)";
}

namespace {

// The kernel's struct sched_attr, first version (SCHED_ATTR_SIZE_VER0, 48
// bytes): glibc 2.36 has no wrapper, and <linux/sched/types.h> clashes with
// <sched.h> over struct sched_param.
struct SchedAttr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;  // for the fair policies: the custom slice, ns
  uint64_t sched_deadline;
  uint64_t sched_period;
};
static_assert(sizeof(SchedAttr) == 48);

Error sched_error(const char* call) {
  int saved = errno;
  return Error{std::string(call) + ": " + std::strerror(saved) + " (errno " + std::to_string(saved) + ")"};
}

Status read_sched_attr(SchedAttr& attr) {
  attr = {};
  if (::syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) != 0) return sched_error("sched_getattr");
  return Ok{};
}

}  // namespace

Result<uint32_t> set_current_thread_slice(uint32_t slice_us) {
  if (slice_us < kMinSliceUs || slice_us > kMaxSliceUs) {
    return Error{"slice " + std::to_string(slice_us) + " µs is outside " + std::to_string(kMinSliceUs) + ".." +
                 std::to_string(kMaxSliceUs) + " µs"};
  }
  SchedAttr attr;
  if (auto read = read_sched_attr(attr); !read) return read.error();
  if (attr.sched_policy != SCHED_OTHER && attr.sched_policy != SCHED_BATCH) {
    return Error{"the thread runs under scheduling policy " + std::to_string(attr.sched_policy) +
                 ", which has no slices"};
  }
  attr.size = sizeof attr;
  attr.sched_flags = 0;
  attr.sched_runtime = uint64_t{slice_us} * 1000;  // policy and nice as read
  if (::syscall(SYS_sched_setattr, 0, &attr, 0) != 0) return sched_error("sched_setattr");
  if (auto read = read_sched_attr(attr); !read) return read.error();
  return static_cast<uint32_t>(attr.sched_runtime / 1000);
}

void name_current_thread(std::string_view name) {
  std::string truncated(name.substr(0, kThreadNameMax));
  pthread_setname_np(pthread_self(), truncated.c_str());
}

bool lower_current_thread_priority(int niceness, std::string_view role) {
  if (::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), niceness) == 0) return true;
  TW_WARN("%.*s: cannot lower its priority; it competes with the loops as an equal", static_cast<int>(role.size()),
          role.data());
  return false;
}

}  // namespace tw
