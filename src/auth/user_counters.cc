#include "auth/user_counters.h"

#include <iterator>

namespace tw::auth {

UserCounters::Counter UserCounters::of(const std::string& user) {
  std::lock_guard lock(mutex_);
  if (Counter held = counters_[user].lock()) return held;
  // Users without a connection are forgotten now and then: the entries stay
  // within twice the users with one, at a cost amortized over the lookups.
  if (counters_.size() >= sweep_at_) {
    for (auto it = counters_.begin(); it != counters_.end();) {
      it = it->second.expired() && it->first != user ? counters_.erase(it) : std::next(it);
    }
    sweep_at_ = 2 * counters_.size() + 16;
  }
  auto fresh = std::make_shared<std::atomic<uint32_t>>(0);
  counters_[user] = fresh;
  return fresh;
}

bool take_below(std::atomic<uint32_t>& counter, uint32_t limit) {
  uint32_t now = counter.load(std::memory_order_relaxed);
  do {
    if (now >= limit) return false;
  } while (!counter.compare_exchange_weak(now, now + 1, std::memory_order_relaxed));
  return true;
}

}  // namespace tw::auth
