// Field lists: the market-data payload. A field list is a set of
// (field id -> typed value) pairs; prices are exact decimals, never doubles.
//
// Encoding (little-endian), the payload of PUBLISH/IMAGE/UPDATE for field-list channels:
//   u16 count, then `count` entries of
//     u16 field_id, u8 type, value
//   value by type:
//     1 INT      i64
//     2 DECIMAL  i64 mantissa, i8 exponent        value = mantissa * 10^exponent
//     3 STRING   u16 length + UTF-8 bytes
//     4 BYTES    u16 length + raw bytes
//     5 TIME     u64 nanoseconds since the Unix epoch
// A field id appears at most once per list. Exponent is within [-18, 18].
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tickwire/wire/bytes.h"

namespace tw::fields {

enum class FieldType : uint8_t { Int = 1, Decimal = 2, String = 3, Bytes = 4, Time = 5 };
const char* type_name(FieldType t);                      // "int", "decimal", ...
bool parse_type(std::string_view name, FieldType& out);  // inverse of type_name

struct Decimal {
  int64_t mantissa = 0;
  int8_t exponent = 0;
  // "123.45" -> {12345, -2}; "-0.5", "7", "1e3" accepted; false on garbage or overflow.
  static bool parse(std::string_view text, Decimal& out);
  std::string to_string() const;  // exact, no exponent notation for exponents in [-18, 18]
  double to_double() const;       // for display and statistics only
  friend bool operator==(const Decimal&, const Decimal&) = default;
};

// A decoded value; string/bytes views point into the payload it was read from.
struct FieldValue {
  FieldType type = FieldType::Int;
  int64_t i = 0;         // Int, Time (as ns), Decimal mantissa
  int8_t exponent = 0;   // Decimal
  std::string_view s;    // String, Bytes
  Decimal decimal() const { return {i, exponent}; }
};

// Appends entries into caller memory; never allocates. finish() patches the count.
class FieldListWriter {
 public:
  explicit FieldListWriter(std::span<uint8_t> out);
  void add_int(uint16_t id, int64_t v);
  void add_decimal(uint16_t id, Decimal v);
  void add_string(uint16_t id, std::string_view v);
  void add_bytes(uint16_t id, std::span<const uint8_t> v);
  void add_time(uint16_t id, uint64_t ns);
  void add(uint16_t id, const FieldValue& v);
  // Encoded size, or 0 if the output overflowed.
  size_t finish();

 private:
  // Writes the entry header; false (and the list fails) past 65535 entries.
  bool begin_entry(uint16_t id, FieldType type);
  wire::ByteWriter w_;
  uint16_t count_ = 0;
  bool too_many_ = false;
};

// Validates a whole payload: structure, known types, no duplicate ids,
// exponent range, STRING values in valid UTF-8 (BYTES are any bytes).
bool validate(std::span<const uint8_t> payload);
// Why validate() refused a payload: Utf8 when it is well formed but for a STRING value's text.
enum class Invalid { None, Malformed, Utf8 };
Invalid why_invalid(std::span<const uint8_t> payload);

// Calls fn(uint16_t id, const FieldValue&) for each entry; false if malformed.
template <typename Fn>
bool for_each(std::span<const uint8_t> payload, Fn&& fn);

// Decodes the entry at the reader; false if malformed.
bool read_entry(wire::ByteReader& r, uint16_t& id, FieldValue& v);

template <typename Fn>
bool for_each(std::span<const uint8_t> payload, Fn&& fn) {
  wire::ByteReader r(payload);
  uint16_t count = r.u16();
  if (r.failed()) return false;
  for (uint16_t i = 0; i < count; ++i) {
    uint16_t id = 0;
    FieldValue v;
    if (!read_entry(r, id, v)) return false;
    fn(id, v);
  }
  return r.at_end();
}

// Whether a payload still needs validate().
enum class Checked { No, Already };

// The merged current state of a field-list channel: the last-value cache entry.
// Merging in steady state (same fields, strings no longer than before) does
// not allocate: values are overwritten in place.
class FieldImage {
 public:
  struct Field {
    uint16_t id = 0;
    FieldType type = FieldType::Int;
    int8_t exponent = 0;
    int64_t i = 0;
    std::string s;  // String / Bytes
    FieldValue view() const { return {type, i, exponent, s}; }
  };

  // Validates, then merges field by field. On a malformed payload the image is unchanged.
  // Checked::Already skips the validation for a payload this process has
  // validated before (a record between the broker's own threads); never for
  // bytes straight from a socket.
  bool merge(std::span<const uint8_t> payload, Checked checked = Checked::No);
  // Validates, then replaces the whole image.
  bool replace(std::span<const uint8_t> payload, Checked checked = Checked::No);
  void clear() { fields_.clear(); }

  const Field* find(uint16_t id) const;
  const std::vector<Field>& fields() const { return fields_; }  // sorted by id
  size_t encoded_size() const;
  // Encodes the image as a field list; returns the size or 0 if it does not fit.
  size_t encode(std::span<uint8_t> out) const;

 private:
  void apply(uint16_t id, const FieldValue& v);
  std::vector<Field> fields_;
};

}  // namespace tw::fields
