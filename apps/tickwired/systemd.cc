#include "systemd.h"

#include <systemd/sd-daemon.h>

#include <chrono>

#include "base/log.h"
#include "tier/broker.h"

namespace tw::tickwired {

void Systemd::ready() { sd_notify(0, "READY=1"); }

void Systemd::stopping() { sd_notify(0, "STOPPING=1"); }

void Systemd::start_watchdog(const tier::Broker& broker) {
  uint64_t interval_us = 0;
  if (sd_watchdog_enabled(0, &interval_us) <= 0 || interval_us == 0) return;
  TW_INFO("systemd watchdog: every %llu ms while the loops turn", static_cast<unsigned long long>(interval_us / 2000));
  watchdog_ = std::thread([this, &broker, half = std::chrono::microseconds(interval_us / 2)] {
    uint64_t last_turns = UINT64_MAX;
    while (!stop_.load(std::memory_order_relaxed)) {
      // Loops publish their snapshot each tick, so an idle broker's turns move too.
      uint64_t turns = broker.totals().loop.turns;
      if (turns != last_turns) sd_notify(0, "WATCHDOG=1");
      else TW_WARN("systemd watchdog: no loop turned in %lld ms; not pinging", static_cast<long long>(half.count() / 1000));
      last_turns = turns;
      for (auto slept = std::chrono::microseconds(0); slept < half && !stop_.load(std::memory_order_relaxed);
           slept += std::chrono::milliseconds(50))
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
}

void Systemd::stop_watchdog() {
  stop_.store(true, std::memory_order_relaxed);
  if (watchdog_.joinable()) watchdog_.join();
}

}  // namespace tw::tickwired
