// What perf's raw transports (mqtt-raw, nats-raw) share: one RawStream, the
// poll/flush/close cycle, back pressure on the stream's unsent output, and a
// sync() that is a ping answered by a pong (each protocol says how).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "perf/raw_stream.h"
#include "perf/transport.h"

namespace tw::perf {

class RawTransport : public Transport {
 public:
  ~RawTransport() override { close(); }

  Status sync(int timeout_ms) final;
  int poll(int timeout_ms) final;
  Status flush() final;
  int wait_fd() const final { return stream_.fd(); }
  void close() final;

 protected:
  explicit RawTransport(std::string name) : name_(std::move(name)) {}

  // Handles every complete message in stream_.input(); the number of
  // messages handed to the handler, or fail()'s -1.
  virtual int parse() = 0;
  // Appends the protocol's ping; parse() calls note_pong() for each answer.
  virtual void append_ping() = 0;
  void note_pong() { ++pongs_; }

  // Polls until done() or timeout_ms; `what` names what was awaited.
  Status wait_for(const std::function<bool()>& done, int timeout_ms, const std::string& what);
  // Before appending a message: Sent when there is room, else BackPressure or Failed.
  PublishResult room_for_publish();
  // After appending one: writes once kFlushBytes are buffered.
  PublishResult published();
  int fail(std::string why);
  Error error(const std::string& what) const { return Error{name_ + ": " + what}; }

  RawStream stream_;

 private:
  std::string name_;
  std::string error_ = "not connected";
  uint64_t pings_sent_ = 0;
  uint64_t pongs_ = 0;
};

}  // namespace tw::perf
