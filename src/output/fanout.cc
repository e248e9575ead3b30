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
  // An outlet's flush never marks another dirty, so one pass empties the list.
  const size_t count = dirty_.size();
  const size_t first = rotation_.start(count);
  for (size_t k = 0; k < count; ++k) {
    Flushable* outlet = dirty_[Rotation::at(first, k, count)];
    outlet->dirty = false;
    outlet->flush_output();
  }
  dirty_.clear();
  arena_.reset();
  ++generation_;
}

}  // namespace tw::output
