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

namespace tw::tier {

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
