// Round-robin order over a loop's connections. A loop that serves them in
// one fixed order every turn makes the same one wait for all the others
// every time; starting each turn one further along spreads that wait evenly.
#pragma once
#include <cstddef>

namespace tw {

class Rotation {
 public:
  // The first index of this turn's walk over `count` items (0 when empty);
  // the next turn starts one further along.
  size_t start(size_t count) { return count == 0 ? 0 : turns_++ % count; }

  // Step k of a walk over [0, count) that began at `first`, wrapping around.
  static size_t at(size_t first, size_t k, size_t count) { return first + k < count ? first + k : first + k - count; }

 private:
  size_t turns_ = 0;
};

}  // namespace tw
