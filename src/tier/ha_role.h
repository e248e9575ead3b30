// The HA pair's role as the access points see it (docs/ARCHITECTURE.md,
// "High availability"): whether this broker serves clients now, and what a
// refused connection is told. Set from the election's thread, read by every
// loop: a new connection checks serving() (one atomic load), and each loop's
// tick compares generation() to close what it holds when serving stops.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace tw::tier {

// What the admin API, /metrics and `tickwire ha status` show of an HA pair's
// member (docs/operations.md, "High availability"); enabled false without [ha].
struct HaStatus {
  bool enabled = false;
  std::string name;              // this broker's address in etcd (ha.advertise)
  bool primary = false;          // it holds the leader key
  bool serving = true;           // it takes client connections
  bool may_acknowledge = false;  // inside its term's time fence: guaranteed publishes are acknowledged
  int64_t epoch = 0;             // the term's (its own when primary, the leader's otherwise; 0 = unknown)
  std::string leader;            // the primary's address ("" = unknown)
  uint32_t ttl_s = 0;
  std::vector<std::string> etcd;
};

class HaRole {
 public:
  bool serving() const { return serving_.load(std::memory_order_acquire); }
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  std::string refusal() const {
    std::lock_guard lock(mutex_);
    return refusal_;
  }
  // Any thread. `refusal`: what a refused connection is told (serving false).
  void set(bool serving, std::string refusal) {
    {
      std::lock_guard lock(mutex_);
      if (serving == serving_.load() && refusal == refusal_) return;
      refusal_ = std::move(refusal);
    }
    serving_.store(serving, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }

 private:
  std::atomic<bool> serving_{true};
  std::atomic<uint64_t> generation_{0};
  mutable std::mutex mutex_;
  std::string refusal_;
};

}  // namespace tw::tier
