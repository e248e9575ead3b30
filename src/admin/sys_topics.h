// $SYS topics: the broker's statistics as MQTT users know them from mosquitto
// (docs/mqtt.md, "$SYS"): every sys_interval_ms a thread of its own samples
// the statistics (admin/statistics.h) and publishes each figure as text on
// its $SYS/broker/... topic, on the loop that owns it, as REST publish does.
// The channels keep their last value, so a new subscriber gets each at once.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "admin/statistics.h"

namespace tw::admin {

class SysTopics {
 public:
  SysTopics(Statistics& stats, uint32_t interval_ms) : stats_(stats), interval_ms_(interval_ms) {}
  ~SysTopics() { stop(); }
  SysTopics(const SysTopics&) = delete;
  SysTopics& operator=(const SysTopics&) = delete;

  // Publishes at once, then every interval, until stop(); nothing with an interval of 0.
  void start();
  void stop();

  // The topics and their text for one sample (public for tests).
  static std::vector<std::pair<std::string, std::string>> figures(const Sample& sample, uint64_t uptime_s);

 private:
  void run();
  void publish_all();

  Statistics& stats_;
  const uint32_t interval_ms_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tw::admin
