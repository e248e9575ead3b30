// Helpers shared by the fields tests: build payloads from a short description.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "tickwire/fields/field_list.h"

namespace tw::fields::testing {

inline std::vector<uint8_t> build(const std::function<void(FieldListWriter&)>& fill) {
  std::vector<uint8_t> buf(256 * 1024);
  FieldListWriter w(buf);
  fill(w);
  size_t n = w.finish();
  buf.resize(n);
  return buf;
}

// A raw payload, for malformed inputs the writer would never produce.
class RawPayload {
 public:
  explicit RawPayload(uint16_t count) { put(&count, 2); }
  RawPayload& u8(uint8_t v) { return put(&v, 1); }
  RawPayload& u16(uint16_t v) { return put(&v, 2); }
  RawPayload& i64(int64_t v) { return put(&v, 8); }
  RawPayload& entry(uint16_t id, FieldType t) { return u16(id).u8(static_cast<uint8_t>(t)); }
  std::vector<uint8_t> bytes() const { return bytes_; }

 private:
  RawPayload& put(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
    return *this;
  }
  std::vector<uint8_t> bytes_;
};

}  // namespace tw::fields::testing
