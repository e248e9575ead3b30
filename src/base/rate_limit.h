// RateLimit: a token bucket for one log site, so that a flood of bad
// connections costs a few lines a second, not one line (a write(2)) each.
// A site may log `burst` lines at once and then one per `interval_ns`; the
// first line it logs after a pause says how many it left out meanwhile.
//
// One bucket per log site and thread (TW_*_LIMITED below keep a
// thread_local one), so the loops never share or wait on it.
#pragma once
#include <cstdint>

#include "base/clock.h"
#include "base/log.h"

namespace tw::log {

class RateLimit {
 public:
  static constexpr uint32_t kBurst = 10;
  static constexpr uint64_t kIntervalNs = 1'000'000'000;  // one line a second after the burst

  explicit RateLimit(uint32_t burst = kBurst, uint64_t interval_ns = kIntervalNs)
      : burst_(burst), interval_ns_(interval_ns), tokens_(burst) {}

  // True if a line may be written at `now_ns`; then `suppressed` is how many
  // were refused since the last one allowed (and the count starts again).
  bool allow(uint64_t now_ns, uint64_t& suppressed) {
    refill(now_ns);
    if (tokens_ == 0) {
      ++suppressed_;
      return false;
    }
    --tokens_;
    suppressed = suppressed_;
    suppressed_ = 0;
    return true;
  }

 private:
  void refill(uint64_t now_ns) {
    if (last_ns_ == 0) last_ns_ = now_ns;
    const uint64_t earned = (now_ns - last_ns_) / interval_ns_;
    if (earned == 0) return;
    tokens_ = earned >= burst_ - tokens_ ? burst_ : tokens_ + static_cast<uint32_t>(earned);
    last_ns_ += earned * interval_ns_;
  }

  uint32_t burst_;
  uint64_t interval_ns_;
  uint32_t tokens_;
  uint64_t last_ns_ = 0;
  uint64_t suppressed_ = 0;
};

}  // namespace tw::log

// Like TW_LOG, rate-limited per call site and thread.
#define TW_LOG_LIMITED(lvl, ...)                                                                              \
  do {                                                                                                        \
    if (::tw::log::Level::lvl >= ::tw::log::level()) {                                                        \
      static thread_local ::tw::log::RateLimit tw_site_limit;                                                 \
      uint64_t tw_suppressed = 0;                                                                             \
      if (tw_site_limit.allow(::tw::monotonic_ns(), tw_suppressed)) {                                         \
        if (tw_suppressed != 0) {                                                                             \
          ::tw::log::write(::tw::log::Level::lvl, "(%lu similar lines suppressed)",                           \
                           static_cast<unsigned long>(tw_suppressed));                                        \
        }                                                                                                     \
        ::tw::log::write(::tw::log::Level::lvl, __VA_ARGS__);                                                 \
      }                                                                                                       \
    }                                                                                                         \
  } while (0)
#define TW_WARN_LIMITED(...) TW_LOG_LIMITED(Warn, __VA_ARGS__)
#define TW_ERROR_LIMITED(...) TW_LOG_LIMITED(Error, __VA_ARGS__)
