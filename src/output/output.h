// Output: one connection's outgoing bytes, whatever its protocol. Frames
// encoded into the turn's arena are queued by reference; frames too large
// for the arena, or queued while the arena must not be touched (during a
// flush), are queued as copies. Marks the connection dirty so the turn's end
// flushes it.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "io/out_queue.h"
#include "output/fanout.h"
#include "output/flushable.h"

namespace tw::output {

class Output {
 public:
  Output(Fanout& fanout, Flushable& owner) : fanout_(fanout), owner_(owner) {}

  // Encodes a frame of at most max_size bytes (encode(span) -> size, 0 = nothing) and queues it.
  template <typename Encode>
  void queue(size_t max_size, Encode&& encode) {
    if (max_size > fanout_.arena_capacity()) return copy(max_size, encode);
    auto space = fanout_.reserve(max_size);
    size_t n = encode(space);
    if (n == 0) return;
    queue_ref(fanout_.commit(n));
  }
  // Like queue(), but never touches the arena (safe inside a flush).
  template <typename Encode>
  void copy(size_t max_size, Encode&& encode) {
    if (scratch_.size() < max_size) scratch_.resize(max_size);
    size_t n = encode(std::span<uint8_t>(scratch_.data(), max_size));
    if (n == 0) return;
    out_.append_copy({scratch_.data(), n});
    fanout_.mark_dirty(&owner_);
  }
  // A frame that stays valid until the turn's flush (arena or ring).
  void queue_ref(std::span<const uint8_t> frame) {
    out_.append_ref(frame);
    fanout_.mark_dirty(&owner_);
  }
  io::OutQueue& queue() { return out_; }
  const io::OutQueue& queue() const { return out_; }
  size_t queued_bytes() const { return out_.queued_bytes(); }
  bool empty() const { return out_.empty(); }

 private:
  Fanout& fanout_;
  Flushable& owner_;
  io::OutQueue out_;
  std::vector<uint8_t> scratch_;  // copies, and frames larger than the arena
};

}  // namespace tw::output
