// Fuzzes the perf consumer, which reads probe headers (sequence numbers,
// publisher and topic ids) straight off the network: arbitrary payloads must
// never crash it, and its counters must stay consistent.
#include <cstdint>
#include <cstdlib>
#include <span>

#include "perf/consumer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tw::perf::Consumer consumer;
  uint64_t now = 1'000'000'000;
  std::span<const uint8_t> in(data, size);
  while (in.size() >= 2) {
    // Each message: one byte of length (x2, so headers and padding are both
    // reachable), one byte of flags, then the payload.
    size_t length = std::min<size_t>(static_cast<size_t>(in[0]) * 2, in.size() - 2);
    bool initial_image = (in[1] & 1) != 0;
    now += in[1];
    consumer.on_message(in.subspan(2, length), initial_image, now);
    in = in.subspan(2 + length);
  }
  (void)consumer.take_interval(now + 1);
  const auto& t = consumer.totals();
  if (t.probes > t.received) std::abort();
  return 0;
}
