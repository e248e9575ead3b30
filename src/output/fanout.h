// Fanout: one reactor's outgoing path. Frames are encoded once into the
// turn's arena and referenced by every outlet that sends them; outlets with
// queued output are listed as dirty and flushed once at the end of the turn
// (one writev each), then the arena is reset. Each flush starts one further
// along the dirty list than the last: outlets are listed in the order of a
// channel's subscribers, so without the rotation the same subscriber would
// always get its writev last, a few microseconds per connection after the first.
// Owned by its reactor's thread (checked in debug builds).
#pragma once
#include <span>
#include <vector>

#include "base/owner_thread.h"
#include "base/rotation.h"
#include "output/arena.h"
#include "output/flushable.h"

namespace tw::output {

class Fanout {
 public:
  explicit Fanout(size_t arena_capacity) : arena_(arena_capacity) { dirty_.reserve(1024); }

  // Space for a frame of at most max_size bytes. When the arena is full every
  // dirty outlet is flushed and the arena reset first, so earlier
  // reservations become invalid: commit before reserving again. Empty only
  // when max_size exceeds the arena's capacity.
  std::span<uint8_t> reserve(size_t max_size) {
    owner_.check("Fanout");
    auto out = arena_.reserve(max_size);
    if (out.empty() && max_size <= arena_.capacity()) {
      flush_all();
      out = arena_.reserve(max_size);
    }
    return out;
  }
  std::span<const uint8_t> commit(size_t size) {
    owner_.check("Fanout");
    return arena_.commit(size);
  }

  void mark_dirty(Flushable* outlet) {
    owner_.check("Fanout");
    if (!outlet->dirty) {
      outlet->dirty = true;
      dirty_.push_back(outlet);
    }
  }
  // Forgets an outlet that is being destroyed.
  void forget(Flushable* outlet);
  void flush_all();
  size_t arena_capacity() const { return arena_.capacity(); }
  // Changes whenever the arena is reset: frames committed before are gone.
  uint64_t generation() const { return generation_; }
  // The loop thread claims its fanout when it starts (base/owner_thread.h).
  void claim_owner() { owner_.claim(); }

 private:
  FrameArena arena_;
  std::vector<Flushable*> dirty_;
  Rotation rotation_;  // picks the outlet flushed first
  uint64_t generation_ = 0;
  [[no_unique_address]] OwnerThread owner_;
};

}  // namespace tw::output
