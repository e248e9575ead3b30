// PartialInput: a session's own input buffer. A session reads into its
// loop's shared read buffer and parses there; only what is left over (a
// partial frame, or frames waiting behind a paced reply or a login) is kept
// here. It grows with the bytes that actually arrive, never to the size a
// header claims, and is freed when the connection has been quiet (the
// session counts its capacity in the loop's InputBudget). It remembers when
// the partial frame began, for the frame deadline. Owned by the loop thread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tw::session {

class PartialInput {
 public:
  bool empty() const { return len_ == 0; }
  std::span<const uint8_t> bytes() const { return {buf_.data(), len_}; }
  // What it holds in memory, used or not (0: nothing allocated).
  size_t capacity() const { return buf_.capacity(); }
  // When the first byte of the partial frame arrived; 0: none is held.
  uint64_t frame_started_ns() const { return frame_started_ns_; }

  // The next bytes of the partial frame: the buffer grows only by them.
  void append(std::span<const uint8_t> arrived);
  // After a parse: keeps `rest` (what the parse left, of the read buffer or
  // of this buffer) at the front. `frame_completed`: a frame ended in this
  // parse, so what is left began arriving at `now_ns`.
  void keep(std::span<const uint8_t> rest, bool frame_completed, uint64_t now_ns);
  // Frees the buffer and whatever it held.
  void release();

 private:
  static constexpr size_t kMinBytes = 4 * 1024;  // the buffer's size once it holds anything

  std::vector<uint8_t> buf_;
  size_t len_ = 0;
  uint64_t frame_started_ns_ = 0;
};

}  // namespace tw::session
