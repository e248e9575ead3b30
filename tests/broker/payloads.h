// Field-list payloads for the broker tests.
#pragma once
#include <cstdint>
#include <vector>

#include "tickwire/fields/field_list.h"

namespace tw::broker {

// A field list holding one INT field.
inline std::vector<uint8_t> int_field(uint16_t id, int64_t value) {
  std::vector<uint8_t> buf(32);
  fields::FieldListWriter w(buf);
  w.add_int(id, value);
  buf.resize(w.finish());
  return buf;
}

}  // namespace tw::broker
