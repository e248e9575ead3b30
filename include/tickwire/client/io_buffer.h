// Byte buffers for one connection. Both are allocated once and reused: the
// output buffer grows geometrically up to a bound (so steady-state publishing
// never allocates), the input buffer holds at least one maximum-size frame.
#pragma once
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace tw::client {

class ByteBuffer {
 public:
  explicit ByteBuffer(size_t capacity = 0) : buf_(capacity) {}

  std::span<const uint8_t> readable() const { return {buf_.data() + begin_, end_ - begin_}; }
  std::span<uint8_t> writable() { return {buf_.data() + end_, buf_.size() - end_}; }
  void commit(size_t n) { end_ += n; }
  void consume(size_t n) {
    begin_ += n;
    if (begin_ == end_) begin_ = end_ = 0;  // the common case: everything went out, no copy
  }
  bool empty() const { return begin_ == end_; }
  size_t size() const { return end_ - begin_; }
  size_t capacity() const { return buf_.size(); }
  void clear() { begin_ = end_ = 0; }

  // Makes room for `need` contiguous writable bytes: first by moving unread
  // bytes to the front, then by doubling up to `limit`. False if it cannot.
  bool reserve(size_t need, size_t limit) {
    if (buf_.size() - end_ >= need) return true;
    compact();
    if (buf_.size() - end_ >= need) return true;
    size_t want = end_ + need;
    if (want > limit) return false;
    size_t grown = buf_.empty() ? want : buf_.size();
    while (grown < want) grown *= 2;
    buf_.resize(grown < limit ? grown : limit);
    return true;
  }

  void compact() {
    if (begin_ == 0) return;
    size_t n = end_ - begin_;
    if (n) std::memmove(buf_.data(), buf_.data() + begin_, n);
    begin_ = 0;
    end_ = n;
  }

 private:
  std::vector<uint8_t> buf_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

}  // namespace tw::client
