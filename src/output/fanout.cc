#include "output/fanout.h"

#include <algorithm>

namespace tw::output {

void Fanout::forget(Flushable* outlet) {
  if (!outlet->dirty) return;
  dirty_.erase(std::remove(dirty_.begin(), dirty_.end(), outlet), dirty_.end());
  outlet->dirty = false;
}

void Fanout::flush_all() {
  owner_.check("Fanout");
  // An outlet's flush never marks another dirty, but it may list itself
  // again: a slow consumer that drained to its low-water mark queues its
  // held-back refreshes during its own flush (copies, never in the arena).
  // Those stay listed for the next flush. Cleared with the rest, they would
  // leave the outlet marked dirty yet in no list, and every reference it
  // queued after would outlive the arena it points into.
  const size_t count = dirty_.size();
  const size_t first = rotation_.start(count);
  for (size_t k = 0; k < count; ++k) {
    Flushable* outlet = dirty_[Rotation::at(first, k, count)];
    outlet->dirty = false;
    outlet->flush_output();
  }
  dirty_.erase(dirty_.begin(), dirty_.begin() + static_cast<std::ptrdiff_t>(count));
  arena_.reset();
  ++generation_;
}

}  // namespace tw::output
