// Drop copies: every order event the router handles, published as a field
// list on the broker (docs/fix.md, "Drop copies").
//
// Topic: <prefix>/<client session>/<exchange session>. One channel per
// client/exchange pair, not per order: the broker holds a channel per topic
// for as long as it keeps its last value, and a connection may create at
// most limits.max_channels_per_connection (100,000) of them over its life,
// which a gateway routing thousands of orders a second would exhaust within
// a minute. On one channel the broker keeps order, so a subscriber sees an
// order's events in the sequence the gateway handled them.
//
// Fields: FIX tag T is field id kTagBase + T (STRING, the FIX text as is;
// BYTES where it is not UTF-8; for T <= 45535); FIX_EVENT (kTagBase) is the event; TIMACT (5) the time
// the gateway handled it. Each is published as an image (the channel's last
// value is the last event whole, not a merge of several).
//
// The Client is single-threaded: it lives on this class's thread, which
// QuickFIX's threads hand events to through a queue. Woken by the first copy
// of a burst, the thread waits 0.5 ms for more and publishes them together.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tickwire/client/options.h"
#include "fix/router.h"

namespace tw::fix {

inline constexpr uint16_t kTagBase = 20000;

// The field list of one drop copy.
std::vector<uint8_t> encode_drop_copy(const DropCopy& copy, uint64_t time_ns);
std::string drop_copy_topic(const std::string& prefix, const DropCopy& copy);

struct DropCopyCounters {
  std::atomic<uint64_t> published{0};
  std::atomic<uint64_t> dropped{0};  // broker unreachable or refusing: not queued (live data would be stale)
};

class DropCopyPublisher {
 public:
  DropCopyPublisher(client::Options options, std::string prefix);
  ~DropCopyPublisher();  // stop()
  void start();
  void stop();
  // Any thread. Copies are published in the order they were added.
  void add(std::vector<DropCopy> copies);
  const DropCopyCounters& counters() const { return counters_; }
  bool connected() const { return connected_.load(std::memory_order_relaxed); }

 private:
  void run();

  client::Options options_;
  std::string prefix_;
  std::mutex mutex_;
  std::vector<DropCopy> queue_;
  bool stopping_ = false;
  int wake_fd_ = -1;  // eventfd: add() wakes the thread out of poll
  std::thread thread_;
  std::atomic<bool> connected_{false};
  DropCopyCounters counters_;
};

}  // namespace tw::fix
