// Field-list encoding, decoding and validation. See field_list.h for the byte layout.
#include "tickwire/fields/field_list.h"

#include <array>
#include <cstring>

#include "wire/utf8.h"

namespace tw::fields {
namespace {

constexpr int8_t kMinExponent = -18;
constexpr int8_t kMaxExponent = 18;

// The ids seen in one field list, on the stack, so validation never allocates.
class FieldIdSet {
 public:
  // False if the id was already present. A market-data update carries a
  // handful of fields: those are checked against a short list, and only a
  // long list pays for clearing the 8 KiB bitset.
  bool insert(uint16_t id) {
    if (small_count_ < kSmall) {
      for (size_t i = 0; i < small_count_; ++i) {
        if (small_[i] == id) return false;
      }
      small_[small_count_++] = id;
      return true;
    }
    if (small_count_ == kSmall) {
      words_.fill(0);
      for (uint16_t seen : small_) set(seen);
      ++small_count_;  // from now on, the bitset
    }
    return set(id);
  }

 private:
  static constexpr size_t kSmall = 32;
  bool set(uint16_t id) {
    uint64_t& word = words_[id >> 6];
    uint64_t bit = uint64_t{1} << (id & 63);
    if (word & bit) return false;
    word |= bit;
    return true;
  }
  std::array<uint16_t, kSmall> small_;
  size_t small_count_ = 0;
  std::array<uint64_t, 65536 / 64> words_;  // filled only past kSmall ids
};

}  // namespace

const char* type_name(FieldType t) {
  switch (t) {
    case FieldType::Int: return "int";
    case FieldType::Decimal: return "decimal";
    case FieldType::String: return "string";
    case FieldType::Bytes: return "bytes";
    case FieldType::Time: return "time";
  }
  return "unknown";
}

bool parse_type(std::string_view name, FieldType& out) {
  for (auto t : {FieldType::Int, FieldType::Decimal, FieldType::String, FieldType::Bytes, FieldType::Time}) {
    if (name == type_name(t)) {
      out = t;
      return true;
    }
  }
  return false;
}

FieldListWriter::FieldListWriter(std::span<uint8_t> out) : w_(out) { w_.u16(0); }

bool FieldListWriter::begin_entry(uint16_t id, FieldType type) {
  if (count_ == UINT16_MAX) {
    too_many_ = true;
    return false;
  }
  ++count_;
  w_.u16(id);
  w_.u8(static_cast<uint8_t>(type));
  return true;
}

void FieldListWriter::add_int(uint16_t id, int64_t v) {
  if (begin_entry(id, FieldType::Int)) w_.i64(v);
}

void FieldListWriter::add_decimal(uint16_t id, Decimal v) {
  if (!begin_entry(id, FieldType::Decimal)) return;
  w_.i64(v.mantissa);
  w_.i8(v.exponent);
}

void FieldListWriter::add_string(uint16_t id, std::string_view v) {
  if (begin_entry(id, FieldType::String)) w_.str16(v);
}

void FieldListWriter::add_bytes(uint16_t id, std::span<const uint8_t> v) {
  if (!begin_entry(id, FieldType::Bytes)) return;
  w_.str16({reinterpret_cast<const char*>(v.data()), v.size()});
}

void FieldListWriter::add_time(uint16_t id, uint64_t ns) {
  if (begin_entry(id, FieldType::Time)) w_.u64(ns);
}

void FieldListWriter::add(uint16_t id, const FieldValue& v) {
  switch (v.type) {
    case FieldType::Int: add_int(id, v.i); return;
    case FieldType::Decimal: add_decimal(id, v.decimal()); return;
    case FieldType::String: add_string(id, v.s); return;
    case FieldType::Bytes:
      add_bytes(id, {reinterpret_cast<const uint8_t*>(v.s.data()), v.s.size()});
      return;
    case FieldType::Time: add_time(id, static_cast<uint64_t>(v.i)); return;
  }
  too_many_ = true;  // an unknown type cannot be encoded: fail the whole list
}

size_t FieldListWriter::finish() {
  if (w_.overflow() || too_many_) return 0;
  std::memcpy(w_.data(), &count_, sizeof(count_));
  return w_.size();
}

bool read_entry(wire::ByteReader& r, uint16_t& id, FieldValue& v) {
  id = r.u16();
  uint8_t type = r.u8();
  if (r.failed()) return false;
  v = FieldValue{};
  v.type = static_cast<FieldType>(type);
  switch (v.type) {
    case FieldType::Int: v.i = r.i64(); break;
    case FieldType::Decimal:
      v.i = r.i64();
      v.exponent = r.i8();
      if (v.exponent < kMinExponent || v.exponent > kMaxExponent) return false;
      break;
    case FieldType::String:
    case FieldType::Bytes: v.s = r.str16(); break;
    case FieldType::Time: v.i = static_cast<int64_t>(r.u64()); break;
    default: return false;
  }
  return !r.failed();
}

namespace {
Invalid check(std::span<const uint8_t> payload) {
  FieldIdSet seen;
  bool unique = true;
  bool text = true;
  bool well_formed = for_each(payload, [&](uint16_t id, const FieldValue& v) {
    unique = seen.insert(id) && unique;
    if (v.type == FieldType::String) text = text && wire::valid_utf8(v.s);
  });
  if (!well_formed || !unique) return Invalid::Malformed;
  return text ? Invalid::None : Invalid::Utf8;
}
}  // namespace

bool validate(std::span<const uint8_t> payload) { return check(payload) == Invalid::None; }

Invalid why_invalid(std::span<const uint8_t> payload) { return check(payload); }

}  // namespace tw::fields
