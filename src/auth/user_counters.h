// UserCounters: one count per user shared by every connection of that user,
// on any loop thread; a connection looks its user's up once (locked) and
// then counts on it without a lock. A count lives while some connection
// holds it, so a user with no connection open starts again from zero.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace tw::auth {

class UserCounters {
 public:
  using Counter = std::shared_ptr<std::atomic<uint32_t>>;
  Counter of(const std::string& user);

 private:
  std::mutex mutex_;  // per connection, never per message
  std::map<std::string, std::weak_ptr<std::atomic<uint32_t>>, std::less<>> counters_;
  size_t sweep_at_ = 16;
};

// Takes one from `counter` while it is below `limit`: the taking is exact
// across threads (no two connections both take the last one).
bool take_below(std::atomic<uint32_t>& counter, uint32_t limit);

}  // namespace tw::auth
