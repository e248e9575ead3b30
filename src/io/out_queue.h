// OutQueue: the bytes waiting to go to one connection, in order:
//   [backlog: owned copy of what earlier turns could not send][refs: this turn's
//   frames, by reference into the FrameArena]
// flush() sends both with one writev; what the socket does not take is copied
// from the refs into the backlog, so the arena can be reset after every flush.
// Adjacent refs are coalesced, so a subscriber that receives a run of
// consecutive arena frames costs one iovec.
#pragma once
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tw::io {

enum class FlushResult { Done, Pending, Error };

// Where a queue's bytes go: a session's transport (plain socket, TLS).
class Writer {
 public:
  virtual ~Writer() = default;
  // Bytes taken (0 when nothing can be taken now), or -1 on a fatal error.
  virtual ssize_t writev(const iovec* iov, int count) = 0;
};

// The plain socket as a Writer: one writev(2).
class FdWriter final : public Writer {
 public:
  explicit FdWriter(int fd) : fd_(fd) {}
  ssize_t writev(const iovec* iov, int count) override;

 private:
  int fd_;
};

class OutQueue {
 public:
  OutQueue();
  // Queues a frame that lives in the arena until the next flush.
  void append_ref(std::span<const uint8_t> frame);
  // Queues a copy, keeping order with the refs (for frames that fit no arena).
  void append_copy(std::span<const uint8_t> frame);
  // One writev (more only past IOV_MAX entries). Pending: bytes remain (wait for EPOLLOUT).
  FlushResult flush(Writer& out);
  size_t queued_bytes() const { return backlog_.size() - backlog_sent_ + ref_bytes_; }
  bool empty() const { return queued_bytes() == 0; }
  size_t backlog_bytes() const { return backlog_.size() - backlog_sent_; }
  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t write_calls() const { return write_calls_; }

 private:
  void move_refs_to_backlog();
  void compact_backlog();
  size_t build_iov(iovec* iov, size_t max) const;
  void consume(size_t n);

  std::vector<uint8_t> backlog_;
  size_t backlog_sent_ = 0;
  std::vector<iovec> refs_;
  size_t ref_bytes_ = 0;
  uint64_t bytes_written_ = 0;
  uint64_t write_calls_ = 0;
};

}  // namespace tw::io
