#include "perf/field_payload.h"

#include "tickwire/fields/field_list.h"

namespace tw::perf {

namespace {

// count, the header entry (id, type, u16 length, 32 bytes), then per field id, type, mantissa, exponent.
constexpr size_t kListOverhead = 2 + (2 + 1 + 2 + kProbeHeaderSize);
constexpr size_t kDecimalEntry = 2 + 1 + 8 + 1;

fields::Decimal value_of(uint64_t seq, uint32_t i) {
  return {static_cast<int64_t>(seq * 1000 + i), -2};
}

}  // namespace

FieldPayload::FieldPayload(uint32_t fields)
    : fields_(fields), buffer_(kListOverhead + kDecimalEntry * fields) {}

std::span<const uint8_t> FieldPayload::build(const ProbeHeader& header) {
  uint8_t raw[kProbeHeaderSize];
  encode_probe(header, raw);
  fields::FieldListWriter writer(buffer_);
  writer.add_bytes(kHeaderFid, raw);
  for (uint32_t i = 0; i < fields_; ++i)
    writer.add_decimal(static_cast<uint16_t>(kFirstValueFid + i), value_of(header.seq, i));
  return {buffer_.data(), writer.finish()};
}

FieldCheck check_fields(std::span<const uint8_t> payload, uint32_t fields) {
  FieldCheck check;
  std::span<const uint8_t> raw_header;
  uint32_t present = 0;
  // First pass: the header, whose seq every value follows from.
  bool ok = fields::for_each(payload, [&](uint16_t id, const fields::FieldValue& v) {
    if (id == kHeaderFid && v.type == fields::FieldType::Bytes)
      raw_header = {reinterpret_cast<const uint8_t*>(v.s.data()), v.s.size()};
  });
  if (!ok || raw_header.empty()) return check;
  check.header = decode_probe(raw_header);
  if (!check.header) return check;
  fields::for_each(payload, [&](uint16_t id, const fields::FieldValue& v) {
    if (id < kFirstValueFid || id >= kFirstValueFid + fields) return;
    ++present;
    uint32_t i = id - kFirstValueFid;
    if (v.type != fields::FieldType::Decimal || !(v.decimal() == value_of(check.header->seq, i))) ++check.wrong;
  });
  check.missing = fields - present;
  return check;
}

}  // namespace tw::perf
