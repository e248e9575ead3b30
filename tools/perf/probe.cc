#include "perf/probe.h"

#include <cstring>
#include <string>

#include "base/clock.h"

namespace tw::perf {

bool encode_probe(const ProbeHeader& header, std::span<uint8_t> payload) {
  if (payload.size() < kProbeHeaderSize) return false;
  std::memcpy(payload.data(), &header, kProbeHeaderSize);
  return true;
}

std::optional<ProbeHeader> decode_probe(std::span<const uint8_t> payload) {
  if (payload.size() < kProbeHeaderSize) return std::nullopt;
  ProbeHeader header;
  std::memcpy(&header, payload.data(), kProbeHeaderSize);
  return header;
}

Result<ClockKind> parse_clock(std::string_view name) {
  if (name == "monotonic") return ClockKind::Monotonic;
  if (name == "realtime") return ClockKind::Realtime;
  return Error{"unknown clock '" + std::string(name) + "' (expected monotonic or realtime)"};
}

uint64_t clock_now_ns(ClockKind clock) {
  return clock == ClockKind::Realtime ? realtime_ns() : monotonic_ns();
}

}  // namespace tw::perf
