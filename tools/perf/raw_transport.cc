#include "perf/raw_transport.h"

namespace tw::perf {

namespace {
constexpr int kWaitStepMs = 10;
}  // namespace

Status RawTransport::sync(int timeout_ms) {
  if (!stream_.connected()) return error("not connected");
  const uint64_t awaited = ++pings_sent_;
  append_ping();
  return wait_for([&] { return pongs_ >= awaited; }, timeout_ms, "the answer to a ping");
}

Status RawTransport::wait_for(const std::function<bool()>& done, int timeout_ms, const std::string& what) {
  for (int waited = 0; !done(); waited += kWaitStepMs) {
    if (waited >= timeout_ms) return error("no " + what + " within " + std::to_string(timeout_ms) + " ms");
    if (poll(kWaitStepMs) < 0) return error(error_);
  }
  return Ok{};
}

int RawTransport::poll(int timeout_ms) {
  if (!stream_.connected()) return -1;
  auto got = stream_.fill(timeout_ms);
  if (!got) return fail(got.error().message);
  return parse();
}

Status RawTransport::flush() {
  if (!stream_.connected()) return error(error_);
  return stream_.flush();
}

void RawTransport::close() {
  if (stream_.connected()) (void)stream_.flush();
  stream_.close();
}

PublishResult RawTransport::room_for_publish() {
  if (!stream_.connected()) return PublishResult::Failed;
  if (stream_.pending_output() < RawStream::kMaxPendingOutput) return PublishResult::Sent;
  if (!stream_.flush()) return PublishResult::Failed;
  return stream_.pending_output() < RawStream::kMaxPendingOutput ? PublishResult::Sent : PublishResult::BackPressure;
}

PublishResult RawTransport::published() {
  if (stream_.pending_output() >= kFlushBytes && !stream_.flush()) return PublishResult::Failed;
  return PublishResult::Sent;
}

int RawTransport::fail(std::string why) {
  error_ = std::move(why);
  stream_.close();
  return -1;
}

}  // namespace tw::perf
