#include "tier/loop_snapshot.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace tw::tier {

namespace {

// Counters, LoopStats and RouterStats are lists of uint64_t counts: summed
// word by word, so a field added to one is in the totals without a line here.
template <typename T>
void add_counts(T& total, const T& part) {
  static_assert(sizeof(T) % sizeof(uint64_t) == 0 && std::has_unique_object_representations_v<T>,
                "a struct of uint64_t counts");
  uint64_t sum[sizeof(T) / sizeof(uint64_t)], more[sizeof(T) / sizeof(uint64_t)];
  std::memcpy(sum, &total, sizeof(T));
  std::memcpy(more, &part, sizeof(T));
  for (size_t i = 0; i < std::size(sum); ++i) sum[i] += more[i];
  std::memcpy(&total, sum, sizeof(T));
}

}  // namespace

void add_to(LoopSnapshot& total, const LoopSnapshot& part) {
  add_counts(total.counters, part.counters);
  add_counts(total.router, part.router);
  const uint64_t longest = std::max(total.loop.max_turn_ns, part.loop.max_turn_ns);
  add_counts(total.loop, part.loop);
  total.loop.max_turn_ns = longest;
}

}  // namespace tw::tier
