// matches(), PatternIndex::match and TopicIndex::match/find run per message or per
// subscription on the hot path and must not allocate. The global operator new of this
// test binary counts calls so that the tests below can see any allocation.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "topic/index.h"
#include "topic/topic.h"

#ifndef TW_SANITIZED
namespace {
std::atomic<size_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }

namespace tw::topic {
namespace {

size_t allocations() { return g_allocations.load(std::memory_order_relaxed); }

TEST(NoAllocation, CounterSeesAllocations) {
  const size_t before = allocations();
  // A direct call of ::operator new, which (unlike a new-expression) the
  // compiler may not elide at -O3.
  void* volatile block = ::operator new(64);
  ::operator delete(block);
  EXPECT_GT(allocations(), before);
}

TEST(NoAllocation, Matches) {
  const size_t before = allocations();
  bool all = matches("NYSE/*/IBM", "NYSE/EQ/IBM") && matches(">", "A/B/C") &&
             !matches("A/>", "A") && matches("a-very-long-level-name-beyond-sso/*",
                                             "a-very-long-level-name-beyond-sso/x");
  EXPECT_EQ(allocations(), before);
  EXPECT_TRUE(all);
}

TEST(NoAllocation, PatternIndexMatch) {
  PatternIndex<int> index;
  index.insert("NYSE/EQ/IBM", 1);
  index.insert("NYSE/*/IBM", 2);
  index.insert("NYSE/>", 3);
  index.insert("a-very-long-level-name-beyond-sso/*", 4);
  int sum = 0;
  const size_t before = allocations();
  index.match("NYSE/EQ/IBM", [&](const int& value) { sum += value; });
  index.match("a-very-long-level-name-beyond-sso/x", [&](const int& value) { sum += value; });
  index.match("unknown/level", [&](const int& value) { sum += value; });
  EXPECT_EQ(allocations(), before);
  EXPECT_EQ(sum, 1 + 2 + 3 + 4);
}

TEST(NoAllocation, TopicIndexMatchAndFind) {
  TopicIndex<int> index;
  index.insert("NYSE/EQ/IBM", 1);
  index.insert("NYSE/EQ/MSFT", 2);
  index.insert("a-very-long-level-name-beyond-sso/x", 4);
  int sum = 0;
  const size_t before = allocations();
  index.match("NYSE/*/IBM", [&](std::string_view, const int& value) { sum += value; });
  index.match(">", [&](std::string_view, const int& value) { sum += value; });
  index.match("a-very-long-level-name-beyond-sso/x", [&](std::string_view, const int& value) { sum += value; });
  const int* found = index.find("NYSE/EQ/MSFT");
  EXPECT_EQ(allocations(), before);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(sum, 1 + (1 + 2 + 4) + 4);
}

}  // namespace
}  // namespace tw::topic
#endif  // TW_SANITIZED
