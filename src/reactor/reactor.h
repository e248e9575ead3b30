// Reactor: one epoll loop, run by exactly one thread, which owns everything
// registered with it. Several reactors (one per thread) make the thread tiers.
//
// Level-triggered epoll, on purpose: a handler reads a bounded amount per
// turn and returns, and the kernel reports the fd again next turn if bytes
// remain. That gives fairness between a flooding publisher and everyone else
// without an extra ready list, which edge-triggered mode would require.
//
// One turn, in this order (see run_once):
//   1. epoll_wait: up to kMaxEvents ready fds, timeout = time to the next tick
//      (0 when an end-of-turn hook asked for another turn at once);
//   2. dispatch each ready fd's handler (reads and parses; encodes into the
//      turn's arena; queues output by reference);
//   3. end-of-turn hooks (the broker flushes every dirty connection here:
//      one writev each, then resets the arena);
//   4. the periodic tick (heartbeats, idle timeouts), at most once per tick_ms.
// Output is flushed before the tick so that timeouts see up-to-date queues.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "base/owner_thread.h"
#include "tickwire/base/result.h"

namespace tw::reactor {

class IoHandler {
 public:
  virtual ~IoHandler() = default;
  virtual void on_io(uint32_t epoll_events) = 0;
};

struct LoopStats {
  uint64_t turns = 0;
  uint64_t events = 0;
  uint64_t max_turn_ns = 0;   // longest turn, excluding the wait
  uint64_t slow_turns = 0;    // turns longer than slow_turn_ns
  uint64_t busy_ns = 0;       // time spent in turns, excluding the wait (busy fraction = its growth / elapsed)
};

class Reactor {
 public:
  Reactor();
  ~Reactor();
  Reactor(const Reactor&) = delete;
  Reactor& operator=(const Reactor&) = delete;

  Status add(int fd, uint32_t events, IoHandler* handler);
  Status modify(int fd, uint32_t events, IoHandler* handler);
  void remove(int fd);

  void set_end_of_turn(std::function<void()> hook) { end_of_turn_ = std::move(hook); }
  void set_tick(uint32_t tick_ms, std::function<void(uint64_t now_ns)> tick);
  // Runs one turn; returns the number of fds dispatched.
  int run_once(int max_wait_ms);
  // Makes the next run_once return without waiting. Async-signal-safe.
  void wake();
  // True (once) if wake() was called since the last check.
  bool consume_wakeup();

  const LoopStats& stats() const { return stats_; }
  // The loop thread claims the reactor when it starts (base/owner_thread.h).
  void claim_owner() { owner_.claim(); }
  // Aborts (debug builds) unless called on this reactor's thread: what lives
  // on the loop without an owner of its own (a session) checks through it.
  void check_owner(const char* what) const { owner_.check(what); }
  uint64_t slow_turn_ns = 10'000'000;

  // Monotonic time for handlers: inside a turn, the time the turn began (one
  // clock read serves every handler of the turn, where each session read its
  // own on every read and write); outside a turn, the clock.
  uint64_t now_ns() const;

 private:
  int epfd_ = -1;
  int wake_fd_ = -1;
  bool woken_ = false;
  std::function<void()> end_of_turn_;
  std::function<void(uint64_t)> tick_;
  uint32_t tick_ms_ = 100;
  uint64_t next_tick_ns_ = 0;
  uint64_t turn_start_ns_ = 0;  // 0: not in a turn
  LoopStats stats_;
  [[no_unique_address]] OwnerThread owner_;
};

}  // namespace tw::reactor
