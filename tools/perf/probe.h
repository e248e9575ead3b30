// The probe header: the first 32 bytes of every perf payload (docs/perf.md).
//
//   offset  size  field
//        0     8  seq            per (publisher_id, topic_index), starting at 1
//        8     8  send_ns        intended send time (fixed rate) or actual send time (rate 0)
//       16     4  publisher_id
//       20     4  topic_index    the global index: --topic-offset + local index
//       24     4  flags          bit 0 = PROBE (a latency probe, not load)
//       28     4  reserved       0
//       32     .  padding up to the payload size
// All fields little-endian.
#pragma once
#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "tickwire/base/result.h"

namespace tw::perf {

inline constexpr size_t kProbeHeaderSize = 32;
inline constexpr uint32_t kFlagProbe = 1u << 0;

struct ProbeHeader {
  uint64_t seq = 0;
  uint64_t send_ns = 0;
  uint32_t publisher_id = 0;
  uint32_t topic_index = 0;
  uint32_t flags = 0;
  uint32_t reserved = 0;

  bool is_probe() const { return (flags & kFlagProbe) != 0; }
  bool operator==(const ProbeHeader&) const = default;
};
static_assert(sizeof(ProbeHeader) == kProbeHeaderSize, "the header is packed as on the wire");
static_assert(std::endian::native == std::endian::little, "encode/decode copy the struct as is");

// Writes the header into the first 32 bytes; false if the payload is shorter.
bool encode_probe(const ProbeHeader& header, std::span<uint8_t> payload);
// Reads the header; nullopt if the payload is shorter than 32 bytes.
std::optional<ProbeHeader> decode_probe(std::span<const uint8_t> payload);

// Which clock stamps send_ns. Monotonic is right on one host; realtime lets
// publisher and subscriber run on two hosts whose clocks are synchronised
// (PTP, chrony): the measured latency then includes the clocks' offset.
enum class ClockKind : uint8_t { Monotonic, Realtime };
Result<ClockKind> parse_clock(std::string_view name);  // "monotonic" | "realtime"
uint64_t clock_now_ns(ClockKind clock);

}  // namespace tw::perf
