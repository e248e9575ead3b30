#include "tier/loop_snapshot.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <type_traits>

namespace tw::tier {

namespace {

// Counters, LoopStats and RouterStats are lists of uint64_t counts: summed
// word by word, so a field added to one is in the totals without a line here.
template <typename T>
void add_counts(T& total, const T& part) {
  static_assert(sizeof(T) % sizeof(uint64_t) == 0 && std::has_unique_object_representations_v<T>,
                "a struct of uint64_t counts");
  using Words = std::array<uint64_t, sizeof(T) / sizeof(uint64_t)>;
  Words sum = std::bit_cast<Words>(total);
  const Words more = std::bit_cast<Words>(part);
  for (size_t i = 0; i < sum.size(); ++i) sum[i] += more[i];
  total = std::bit_cast<T>(sum);
}

}  // namespace

void add_to(LoopSnapshot& total, const LoopSnapshot& part) {
  add_counts(total.counters, part.counters);
  add_counts(total.router, part.router);
  const uint64_t longest = std::max(total.loop.max_turn_ns, part.loop.max_turn_ns);
  add_counts(total.loop, part.loop);
  total.loop.max_turn_ns = longest;
  total.channels += part.channels;
}

}  // namespace tw::tier
