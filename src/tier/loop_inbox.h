// LoopInbox: work another thread (the admin side, src/admin) hands to a loop
// thread, which runs it on its next tick (every 50 ms, idle or not). The
// loop looks at one atomic flag per tick and at nothing per message, so a
// broker nobody asks costs nothing; the asking thread waits a bounded time
// for the answer (admin::ask). What a job may touch is everything the loop
// owns: it runs on the loop thread.
//
// ConnectionInfo is one connection as a loop describes it to the admin side.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace tw::tier {

class LoopInbox {
 public:
  using Job = std::function<void()>;
  // Any thread: runs `job` on the loop thread at its next tick.
  void post(Job job);
  // The loop thread, on its tick: runs what was posted. One relaxed load when nothing was.
  void run_pending();

 private:
  std::mutex mutex_;  // per admin request, never per message
  std::vector<Job> jobs_;
  std::atomic<bool> pending_{false};
};

struct ConnectionInfo {
  uint32_t loop = 0;   // the access point's index
  uint32_t token = 0;  // the connection's id on that access point
  std::string client;  // the name its hello gave ("" before the hello)
  std::string peer;    // "127.0.0.1:53122"
  std::string user;    // "" when authentication is off or anonymous
  std::string protocol;   // "native", "mqtt", "stream" (/stream's JSON)
  std::string transport;  // "tcp", "tls", ...
  uint32_t subscriptions = 0;
  uint64_t msgs_in = 0;    // frames received
  uint64_t bytes_in = 0;
  uint64_t msgs_out = 0;   // stream messages offered (images and updates)
  uint64_t bytes_out = 0;
  uint64_t queued_bytes = 0;
  uint64_t lagging_channels = 0;  // held back while congested (conflate or drop)
  bool slow = false;       // over max_output_buffer or lagging now
  uint64_t dropped_messages = 0;
  uint64_t connected_ms = 0;  // how long it has been open
};

}  // namespace tw::tier
