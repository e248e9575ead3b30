// FrameArena: where a loop turn's outgoing frames are encoded once, then
// referenced (not copied) by every connection that sends them. The arena is
// reset after every connection has flushed; a connection that could not send
// everything copies its unsent tail into its own backlog first (OutQueue).
//
// Owned by one reactor thread. Memory is reserved once: no allocation per message.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace tw::output {

class FrameArena {
 public:
  explicit FrameArena(size_t capacity) : buf_(new uint8_t[capacity]), cap_(capacity) {}

  // Writable space for a frame of at most `max_size` bytes; empty when the
  // arena cannot hold it (the caller flushes, resets and retries).
  std::span<uint8_t> reserve(size_t max_size) {
    if (max_size > cap_ - used_) return {};
    return {buf_.get() + used_, max_size};
  }
  // Keeps the first `size` bytes of the last reserve(); returns them.
  std::span<const uint8_t> commit(size_t size) {
    std::span<const uint8_t> out{buf_.get() + used_, size};
    used_ += size;
    return out;
  }
  void reset() { used_ = 0; }
  size_t used() const { return used_; }
  size_t capacity() const { return cap_; }

 private:
  std::unique_ptr<uint8_t[]> buf_;
  size_t cap_;
  size_t used_ = 0;
};

}  // namespace tw::output
