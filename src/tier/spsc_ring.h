// SpscRing: a lock-free single-producer/single-consumer ring of variable-size
// records, the only thing two reactor threads share (docs/ARCHITECTURE.md,
// "Threads"). The producer writes a record in place and publishes it with one
// release store; the consumer reads records in place, and frees their space
// only when it says so, so it can keep references into the ring until its
// turn's output is flushed (zero-copy from gateway to subscriber socket).
//
// Records are 8-byte aligned and never wrap: a record that does not fit
// before the end of the buffer leaves a skip marker there and starts at 0.
// No allocation after construction; a full ring is the producer's to handle.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

namespace tw::tier {

class SpscRing {
 public:
  // capacity: bytes, rounded up to a power of two (at least 4 KiB).
  explicit SpscRing(size_t capacity);
  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  // --- producer thread
  // Writable space for a record of `size` bytes; empty when the ring is full
  // (or size is larger than a quarter of the ring). Valid until commit().
  std::span<uint8_t> reserve(size_t size);
  // Publishes the record last reserved, of `size` bytes (<= the reserved size).
  void commit(size_t size);
  // The first `size` bytes of the record last reserved (still uncommitted).
  std::span<uint8_t> reserved(size_t size) {
    return {buf_.get() + (reserved_at_ & mask_) + sizeof(uint32_t), size};
  }
  // Whether a record of `size` bytes could ever fit.
  bool fits(size_t size) const { return slot_size(size) <= cap_ / 4; }

  // --- consumer thread
  // The next unread record, or empty when there is none. Reading does not
  // free it: the bytes stay valid until release().
  std::span<const uint8_t> read();
  // Frees every record read so far, for the producer to reuse.
  void release() { head_.store(read_pos_, std::memory_order_release); }
  bool empty() const { return read_pos_ == tail_.load(std::memory_order_acquire); }

  size_t capacity() const { return cap_; }

 private:
  static constexpr uint32_t kSkip = 0xFFFFFFFFu;  // "continue at offset 0"
  static size_t slot_size(size_t size) { return (sizeof(uint32_t) + size + 7) & ~size_t{7}; }
  uint32_t load_u32(size_t pos) const {
    uint32_t v;
    std::memcpy(&v, buf_.get() + pos, sizeof v);
    return v;
  }
  void store_u32(size_t pos, uint32_t v) { std::memcpy(buf_.get() + pos, &v, sizeof v); }

  std::unique_ptr<uint8_t[]> buf_;
  size_t cap_;
  size_t mask_;
  // Positions are free-running byte counts; offset = pos & mask_.
  alignas(64) std::atomic<size_t> tail_{0};  // producer publishes
  size_t write_pos_ = 0;                      // producer's own copy of tail_
  size_t cached_head_ = 0;                    // producer's last view of head_
  size_t reserved_at_ = 0;                    // where the reserved record starts
  alignas(64) std::atomic<size_t> head_{0};   // consumer frees
  size_t read_pos_ = 0;                       // consumer's next record
  size_t cached_tail_ = 0;                    // consumer's last view of tail_
};

}  // namespace tw::tier
