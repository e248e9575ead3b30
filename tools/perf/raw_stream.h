// A plain TCP stream for perf's raw transports (nats-raw, mqtt-raw): the
// minimal client a load generator needs to measure the broker rather than a
// client library. Output is appended to one buffer and written with one
// send() per flush (batched, kFlushBytes at a time); input is read into one
// buffer that the transport parses in place. Both buffers keep their
// capacity, so a warm stream allocates nothing per message.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tickwire/base/result.h"

namespace tw::perf {

class RawStream {
 public:
  // Above this much unsent output, publishers see back pressure.
  static constexpr size_t kMaxPendingOutput = 8u << 20;

  RawStream() = default;
  RawStream(const RawStream&) = delete;
  RawStream& operator=(const RawStream&) = delete;
  ~RawStream() { close(); }

  // Blocking connect (at most timeout_ms), then non-blocking with TCP_NODELAY.
  Status connect(const std::string& host, uint16_t port, int timeout_ms);
  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  void close();

  // Output: append, then flush() writes what the socket takes now.
  std::vector<uint8_t>& out() { return out_; }
  void append(std::string_view bytes) { out_.insert(out_.end(), bytes.begin(), bytes.end()); }
  void append(std::span<const uint8_t> bytes) { out_.insert(out_.end(), bytes.begin(), bytes.end()); }
  size_t pending_output() const { return out_.size() - out_sent_; }
  Status flush();

  // Input: waits up to timeout_ms for the socket (flushing meanwhile), reads
  // what is there. Ok(false) when nothing arrived; an error when the peer closed.
  Result<bool> fill(int timeout_ms);
  std::span<const uint8_t> input() const { return {in_.data() + in_start_, in_end_ - in_start_}; }
  void consume(size_t n) { in_start_ += n; }

 private:
  int fd_ = -1;
  std::vector<uint8_t> out_;
  size_t out_sent_ = 0;
  std::vector<uint8_t> in_;  // [in_start_, in_end_) unparsed; its size only grows
  size_t in_start_ = 0;
  size_t in_end_ = 0;
};

}  // namespace tw::perf
