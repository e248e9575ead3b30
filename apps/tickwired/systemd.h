// systemd integration (packaging/tickwired.service, Type=notify): READY=1 once
// every listener is bound, STOPPING=1 when the shutdown begins, and a watchdog
// that pings only while the broker's loops keep turning, so a stuck loop gets
// the service restarted. Without $NOTIFY_SOCKET (not started by systemd) every
// call does nothing.
#pragma once
#include <atomic>
#include <cstdint>
#include <thread>

namespace tw::tier {
class Broker;
}

namespace tw::tickwired {

class Systemd {
 public:
  Systemd() = default;
  Systemd(const Systemd&) = delete;
  Systemd& operator=(const Systemd&) = delete;
  ~Systemd() { stop_watchdog(); }

  void ready();
  void stopping();
  // Pings WATCHDOG=1 at half the interval systemd asked for (WatchdogSec=), as
  // long as the loops' turn count moves between pings; a no-op without a watchdog.
  void start_watchdog(const tier::Broker& broker);
  void stop_watchdog();

 private:
  std::thread watchdog_;
  std::atomic<bool> stop_{false};
};

}  // namespace tw::tickwired
