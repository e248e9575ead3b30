// Thread placement: cpu list parsing, pinning a real thread, NUMA nodes,
// scheduler slices.
#include "base/affinity.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>


#include <thread>

#include "testlib/sched.h"

namespace tw {
namespace {

std::vector<int> parsed(std::string_view text) {
  auto result = parse_cpu_list(text);
  EXPECT_TRUE(result.ok()) << text << ": " << (result.ok() ? "" : result.error().message);
  return result.ok() ? result.value() : std::vector<int>{};
}

std::string error_of(std::string_view text) {
  auto result = parse_cpu_list(text);
  EXPECT_FALSE(result.ok()) << "accepted: " << text;
  return result.ok() ? std::string() : result.error().message;
}

TEST(ParseCpuList, SingleCpusRangesAndCommas) {
  EXPECT_EQ(parsed("0"), (std::vector<int>{0}));
  EXPECT_EQ(parsed("2-7"), (std::vector<int>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(parsed("0,2,4-6"), (std::vector<int>{0, 2, 4, 5, 6}));
  EXPECT_EQ(parsed("5-5"), (std::vector<int>{5}));
  EXPECT_EQ(parsed("1023"), (std::vector<int>{1023}));
}

TEST(ParseCpuList, KeepsTheOrderWritten) {
  // Threads are pinned in list order, so "8,0" puts the first thread on cpu 8.
  EXPECT_EQ(parsed("8,0,3-4"), (std::vector<int>{8, 0, 3, 4}));
}

TEST(ParseCpuList, BadInputNamesTheBadPart) {
  EXPECT_EQ(error_of(""), "empty cpu list");
  EXPECT_EQ(error_of("x"), "'x': expected a cpu number or a range like 2-7");
  EXPECT_EQ(error_of("2-7,a"), "'a': expected a cpu number or a range like 2-7");
  EXPECT_EQ(error_of("3-"), "'3-': expected a cpu number or a range like 2-7");
  EXPECT_EQ(error_of("-3"), "'-3': expected a cpu number or a range like 2-7");
  EXPECT_EQ(error_of("1-2-3"), "'1-2-3': expected a cpu number or a range like 2-7");
  EXPECT_EQ(error_of(" 1"), "' 1': expected a cpu number or a range like 2-7");
  EXPECT_EQ(error_of("0-8:2"), "'0-8:2': expected a cpu number or a range like 2-7");
  EXPECT_EQ(error_of("7-2"), "'7-2': range runs backwards");
  EXPECT_EQ(error_of("1024"), "'1024': cpu numbers go up to 1023");
  EXPECT_EQ(error_of("0-99999999"), "'0-99999999': cpu numbers go up to 1023");
  EXPECT_EQ(error_of("99999999999"),
            "'99999999999': expected a cpu number or a range like 2-7");
  EXPECT_EQ(error_of("1,,2"), "empty element (two commas, or a comma at an end)");
  EXPECT_EQ(error_of("1,"), "empty element (two commas, or a comma at an end)");
  EXPECT_EQ(error_of(",1"), "empty element (two commas, or a comma at an end)");
}

TEST(ParseCpuList, DuplicatesAreRefused) {
  EXPECT_EQ(error_of("3,3"), "cpu 3 listed twice");
  EXPECT_EQ(error_of("2-5,4"), "cpu 4 listed twice");
  EXPECT_EQ(error_of("6,1-7"), "cpu 6 listed twice");
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// On a thread of its own, so the test process keeps its affinity.
TEST(PinCurrentThread, RunsOnTheCpuItIsPinnedTo) {
  std::vector<int> allowed = allowed_cpus();
  ASSERT_FALSE(allowed.empty());
  for (int cpu : {allowed.back(), allowed.front()}) {
    std::thread([cpu] {
      auto status = pin_current_thread(cpu);
      ASSERT_TRUE(status.ok()) << status.error().message;
      // Setting the affinity migrates the running thread before it returns.
      EXPECT_EQ(sched_getcpu(), cpu);
      cpu_set_t set;
      CPU_ZERO(&set);
      ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
      EXPECT_EQ(CPU_COUNT(&set), 1);
      EXPECT_TRUE(CPU_ISSET(cpu, &set));
    }).join();
  }
}

TEST(PinCurrentThread, RefusalNamesTheCpuAndErrno) {
  std::thread([] {
    auto status = pin_current_thread(-1);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().message, "cannot pin thread to cpu -1: cpu numbers go from 0 to 1023");
    status = pin_current_thread(1024);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().message.rfind("cannot pin thread to cpu 1024: ", 0), 0u);
  }).join();
  if (sysconf(_SC_NPROCESSORS_CONF) <= kMaxCpuNumber) {  // cpu 1023 does not exist here
    std::thread([] {
      auto status = pin_current_thread(kMaxCpuNumber);
      ASSERT_FALSE(status.ok());
      EXPECT_EQ(status.error().message,
                "cannot pin thread to cpu 1023: Invalid argument (errno 22)");
    }).join();
  }
}

bool kernel_has_numa() {
  struct stat info {};
  return stat("/sys/devices/system/node/node0", &info) == 0;
}

TEST(Numa, NodeOfCpuZeroIsKnownExactlyWhenLibnumaIsPresent) {
#ifdef TW_BUILT_WITH_NUMA
  constexpr bool kBuiltWithNuma = true;
#else
  constexpr bool kBuiltWithNuma = false;
#endif
  bool expected = kBuiltWithNuma && kernel_has_numa();
  EXPECT_EQ(numa_supported(), expected);
  if (expected) {
    EXPECT_GE(numa_node_of_cpu(0), 0);
  } else {
    EXPECT_EQ(numa_node_of_cpu(0), -1);
  }
  EXPECT_EQ(numa_node_of_cpu(kMaxCpuNumber + 5), -1) << "not a cpu";
}

TEST(DescribePlacement, NamesCpusAndNodes) {
  EXPECT_EQ(describe_placement({}), "no cpu pinning");
  int node = numa_node_of_cpu(0);
  if (node >= 0) {
    EXPECT_EQ(describe_placement({0}), "cpu 0 on NUMA node " + std::to_string(node));
  } else {
    EXPECT_EQ(describe_placement({0}), "cpu 0 (NUMA node unknown)");
  }
  std::vector<int> allowed = allowed_cpus();
  std::string listed;
  for (int cpu : allowed) listed += (listed.empty() ? "" : ",") + std::to_string(cpu);
  std::string described = describe_placement(allowed);
  EXPECT_EQ(described.rfind((allowed.size() == 1 ? "cpu " : "cpus ") + listed, 0), 0u)
      << described;
}

TEST(NameCurrentThread, TruncatesToFifteenBytes) {
  std::thread([] {
    char name[32] = {};
    name_current_thread("tw-gw-0");
    ASSERT_EQ(pthread_getname_np(pthread_self(), name, sizeof(name)), 0);
    EXPECT_STREQ(name, "tw-gw-0");
    name_current_thread("tw-access-point-12");
    ASSERT_EQ(pthread_getname_np(pthread_self(), name, sizeof(name)), 0);
    EXPECT_STREQ(name, "tw-access-point");
  }).join();
}

using testing::kernel_has_custom_slices;

// The calling thread's slice as sched_getattr reports it, in ns.
uint64_t slice_ns_of_this_thread() {
  auto slice = testing::slice_ns_of(0);
  EXPECT_TRUE(slice.has_value());
  return slice.value_or(0);
}

TEST(SetCurrentThreadSlice, TheKernelReportsTheSliceAndTheNiceValueIsKept) {
  std::thread([] {
    const pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
    ASSERT_EQ(setpriority(PRIO_PROCESS, static_cast<id_t>(tid), 3), 0);
    auto slice = set_current_thread_slice(250);
    ASSERT_TRUE(slice.ok()) << slice.error().message;
    EXPECT_EQ(uint64_t{*slice} * 1000, slice_ns_of_this_thread());
    EXPECT_EQ(*slice, kernel_has_custom_slices() ? 250u : 0u);
    errno = 0;
    EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(tid)), 3);
    EXPECT_EQ(sched_getscheduler(0), SCHED_OTHER);
  }).join();
}

TEST(SetCurrentThreadSlice, RefusesSlicesOutsideTheKernelsRangeAndNonFairPolicies) {
  EXPECT_EQ(set_current_thread_slice(99).error().message, "slice 99 µs is outside 100..100000 µs");
  EXPECT_EQ(set_current_thread_slice(100'001).error().message, "slice 100001 µs is outside 100..100000 µs");
  std::thread([] {
    sched_param none{};
    ASSERT_EQ(sched_setscheduler(0, SCHED_IDLE, &none), 0);
    auto slice = set_current_thread_slice(500);
    ASSERT_FALSE(slice.ok());
    EXPECT_EQ(slice.error().message, "the thread runs under scheduling policy 5, which has no slices");
  }).join();
}

}  // namespace
}  // namespace tw
