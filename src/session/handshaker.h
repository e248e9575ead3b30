// Handshaker: a thread that runs the TLS handshakes of new connections, so
// that no loop thread does. A full handshake costs about half a millisecond
// of CPU with OpenSSL 3.0 on the benchmark machine (key exchange, signature,
// certificate encoding); on a loop, each one would hold every subscriber of
// that loop for that long, and a storm of them adds milliseconds to their
// p99 (docs/benchmarks.md, "TLS handshake storm"). The thread runs at a
// lower priority (nice +10), so a loop woken by market data preempts it.
//
// A connection comes in with its transport before the handshake and leaves
// through its Ready callback once application bytes can flow, on this
// thread; one that fails or passes the timeout is closed here, logged like a
// session ("session PEER closed: tls handshake failed: ..."), and reported
// through on_failed. The transport (and its SSL) changes threads only
// through the callback's hand-over, which orders the two threads' use of it.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "session/transport.h"

namespace tw::session {

class Handshaker {
 public:
  using Ready = std::function<void(std::unique_ptr<Transport> transport, std::string peer)>;
  Handshaker(uint32_t timeout_ms, std::function<void()> on_failed);
  ~Handshaker();  // stop()
  Handshaker(const Handshaker&) = delete;
  Handshaker& operator=(const Handshaker&) = delete;

  void start();
  // Closes every connection still in its handshake (on_failed for each) and joins the thread.
  void stop();
  // Any thread: takes over a transport whose handshake has not completed.
  void add(std::unique_ptr<Transport> transport, std::string peer, Ready ready);

 private:
  struct Pending {
    std::unique_ptr<Transport> transport;
    std::string peer;
    Ready ready;
    uint64_t deadline_ns = 0;
  };

  void run();
  void take_new();
  void advance(int fd);
  void expire(uint64_t now_ns);
  void drop(int fd, const std::string& why);
  void watch(int fd, uint32_t events, bool added);

  const uint64_t timeout_ns_;
  std::function<void()> on_failed_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex inbox_mutex_;  // per connection, never per message
  std::vector<Pending> inbox_;
  std::unordered_map<int, Pending> pending_;  // by fd; the handshaker thread's only
};

}  // namespace tw::session
