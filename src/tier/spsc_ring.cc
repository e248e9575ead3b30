#include "tier/spsc_ring.h"

#include <bit>

namespace tw::tier {

SpscRing::SpscRing(size_t capacity)
    : cap_(std::bit_ceil(capacity < 4096 ? size_t{4096} : capacity)), mask_(cap_ - 1) {
  buf_.reset(new uint8_t[cap_]);
}

std::span<uint8_t> SpscRing::reserve(size_t size) {
  const size_t need = slot_size(size);
  if (need > cap_ / 4) return {};
  size_t offset = write_pos_ & mask_;
  // A record never wraps: skip to offset 0 when it would cross the end.
  const size_t skip = offset + need > cap_ ? cap_ - offset : 0;
  if (write_pos_ + skip + need - cached_head_ > cap_) {
    cached_head_ = head_.load(std::memory_order_acquire);
    if (write_pos_ + skip + need - cached_head_ > cap_) return {};
  }
  if (skip != 0) {
    store_u32(offset, kSkip);
    write_pos_ += skip;
    offset = 0;
  }
  reserved_at_ = write_pos_;
  return {buf_.get() + offset + sizeof(uint32_t), size};
}

void SpscRing::commit(size_t size) {
  store_u32(reserved_at_ & mask_, static_cast<uint32_t>(size));
  write_pos_ = reserved_at_ + slot_size(size);
  tail_.store(write_pos_, std::memory_order_release);
}

std::span<const uint8_t> SpscRing::read() {
  if (read_pos_ == cached_tail_) {
    cached_tail_ = tail_.load(std::memory_order_acquire);
    if (read_pos_ == cached_tail_) return {};
  }
  size_t offset = read_pos_ & mask_;
  uint32_t size = load_u32(offset);
  if (size == kSkip) {
    read_pos_ += cap_ - offset;
    offset = 0;
    size = load_u32(0);
  }
  read_pos_ += slot_size(size);
  return {buf_.get() + offset + sizeof(uint32_t), size};
}

}  // namespace tw::tier
