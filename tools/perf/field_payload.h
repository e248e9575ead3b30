// Field-list payloads for perf (--fields N, native transport): the market-data
// shape of the reference reports' workloads, where updates merge into the
// broker's image and consumers check every field (OpenMAMA's MISSING FIDS).
//
//   FID 1        BYTES, the 32-byte probe header (probe.h)
//   FID 100+i    DECIMAL, i in [0, N): mantissa seq * 1000 + i, exponent -2
//
// Every field's value follows from the header's seq, so a consumer checks an
// update, or an image merged from many updates, without knowing what came
// before: a field absent is a missing FID, a field whose value belongs to
// another seq is a wrong value (a merge that mixed updates up).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "perf/probe.h"

namespace tw::perf {

inline constexpr uint16_t kHeaderFid = 1;
inline constexpr uint16_t kFirstValueFid = 100;
inline constexpr uint32_t kMaxFields = 1000;

// The payload of a field-list message: encoded into one buffer reserved at
// construction; nothing allocated per message.
class FieldPayload {
 public:
  explicit FieldPayload(uint32_t fields);
  std::span<const uint8_t> build(const ProbeHeader& header);
  size_t size() const { return buffer_.size(); }

 private:
  uint32_t fields_;
  std::vector<uint8_t> buffer_;
};

struct FieldCheck {
  std::optional<ProbeHeader> header;  // nullopt: not a field list, or no header field
  uint32_t missing = 0;               // value FIDs absent
  uint32_t wrong = 0;                 // value FIDs whose value is not the header seq's
};
FieldCheck check_fields(std::span<const uint8_t> payload, uint32_t fields);

}  // namespace tw::perf
