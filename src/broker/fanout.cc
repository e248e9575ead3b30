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
  for (Outlet* outlet : dirty_) {
    outlet->dirty = false;
    outlet->flush_output();
  }
  dirty_.clear();
  arena_.reset();
}

}  // namespace tw::broker
