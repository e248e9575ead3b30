// Proves FieldImage::merge does not allocate in steady state. The whole test
// binary's operator new is replaced by one that counts, so any allocation on
// the measured path shows up, wherever it comes from.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "field_test_util.h"
#include "tickwire/fields/field_list.h"

namespace {
std::atomic<size_t> g_allocations{0};
}

// GCC sees free() applied to what it believes is operator new's memory; here
// both sides are ours and both use malloc/free.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace tw::fields {
namespace {

using testing::build;

std::vector<uint8_t> update(int64_t tick, std::string_view name) {
  return build([&](FieldListWriter& w) {
    w.add_decimal(22, {10100 + tick, -2});
    w.add_decimal(25, {10110 + tick, -2});
    w.add_int(30, 500 + tick);
    w.add_string(3, name);
    w.add_bytes(4, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(name.data()), name.size()));
    w.add_time(1025, static_cast<uint64_t>(tick));
  });
}

TEST(FieldImageNoAlloc, SteadyStateMergeDoesNotAllocate) {
  FieldImage image;
  ASSERT_TRUE(image.merge(update(0, "VODAFONE GROUP PLC")));
  // Prepared before measuring: building payloads allocates, merging must not.
  std::vector<std::vector<uint8_t>> updates;
  for (int64_t tick = 1; tick <= 100; ++tick) {
    updates.push_back(update(tick, tick % 2 ? "VOD" : "VODAFONE GROUP PLC"));
  }
  size_t before = g_allocations.load();
  for (const auto& u : updates) ASSERT_TRUE(image.merge(u));
  EXPECT_EQ(g_allocations.load() - before, 0u);
  EXPECT_EQ(image.find(22)->i, 10200);
  EXPECT_EQ(image.find(3)->s, "VODAFONE GROUP PLC");
}

TEST(FieldImageNoAlloc, SubsetUpdateDoesNotAllocate) {
  FieldImage image;
  ASSERT_TRUE(image.merge(update(0, "VODAFONE GROUP PLC")));
  auto bid_only = build([](FieldListWriter& w) { w.add_decimal(22, {1, 0}); });
  size_t before = g_allocations.load();
  ASSERT_TRUE(image.merge(bid_only));
  EXPECT_EQ(g_allocations.load() - before, 0u);
}

TEST(FieldImageNoAlloc, NewFieldOrLongerStringMayAllocate) {
  // The guarantee is only for steady state; this also shows the counter works,
  // so the zero counts above are not vacuous.
  FieldImage image;
  ASSERT_TRUE(image.merge(update(0, "VOD")));
  auto longer = update(1, std::string(200, 'x'));
  size_t before = g_allocations.load();
  ASSERT_TRUE(image.merge(longer));
  EXPECT_GT(g_allocations.load() - before, 0u);
}

}  // namespace
}  // namespace tw::fields
