#include "broker/fanout.h"

#include <algorithm>

namespace tw::broker {

void Fanout::forget(Outlet* outlet) {
  if (!outlet->dirty) return;
  dirty_.erase(std::remove(dirty_.begin(), dirty_.end(), outlet), dirty_.end());
  outlet->dirty = false;
}

void Fanout::flush_all() {
  // An outlet's flush never marks another dirty, so one pass empties the list.
  const size_t count = dirty_.size();
  const size_t first = count == 0 ? 0 : flushes_++ % count;
  for (size_t i = 0; i < count; ++i) {
    Outlet* outlet = dirty_[first + i < count ? first + i : first + i - count];
    outlet->dirty = false;
    outlet->flush_output();
  }
  dirty_.clear();
  arena_.reset();
}

}  // namespace tw::broker
