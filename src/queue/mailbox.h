// Mailbox and Port: how the store thread (spool.h) answers connections that
// live on loop threads. A connection that speaks guaranteed messaging holds a
// Port: its loop's Mailbox, and itself as the PortHandler while it lives.
// The store thread encodes a turn's frames for each port (PUBLISH_ACKs,
// ACKs of BIND, DELIVERs) into one Letter and posts the turn's letters of one
// loop at once, waking it; the loop hands each letter to its port's handler,
// or drops it when the connection has gone meanwhile.
//
// The loop looks at one atomic flag per turn and never per message, so a
// broker without guaranteed traffic pays one relaxed load a turn.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace tw::queue {

class Mailbox;

// What a connection does with what the store sends it, on its loop thread.
class PortHandler {
 public:
  virtual ~PortHandler() = default;
  // Whole frames back to back; `answered` of them are PUBLISH_ACKs (they free the publish window).
  virtual void on_store_frames(std::span<const uint8_t> frames, uint32_t answered) = 0;
};

struct Port {
  std::shared_ptr<Mailbox> mailbox;  // shared: a letter may outlive the loop, which closes it
  PortHandler* handler = nullptr;  // loop thread only; null once the connection has gone
};

class Mailbox {
 public:
  struct Letter {
    std::shared_ptr<Port> port;
    std::vector<uint8_t> frames;
    uint32_t answered = 0;
  };
  // `wake` wakes the loop thread from any thread.
  explicit Mailbox(std::function<void()> wake) : wake_(std::move(wake)) {}
  // The store thread: one turn's letters for this loop's ports (dropped once closed).
  void post(std::vector<Letter> letters);
  // The loop thread, as it ends: no more wake-ups, and what came is dropped.
  void close();
  // The loop thread, every turn: hands what came to the handlers; whether anything did.
  bool deliver_pending();
  bool has_pending() const { return pending_.load(std::memory_order_relaxed); }

 private:
  std::function<void()> wake_;
  std::mutex mutex_;  // per store turn, never per direct message
  std::vector<Letter> letters_;
  std::vector<Letter> taken_;  // the loop's working copy
  std::atomic<bool> pending_{false};
  bool closed_ = false;  // under mutex_
};

}  // namespace tw::queue
