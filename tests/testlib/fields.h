// Field-list payloads for tests: build them from a short literal list and
// compare merged images field by field.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tickwire/fields/field_list.h"

namespace tw::testing {

// One field of a test payload: an INT, a DECIMAL or a STRING.
struct TestField {
  uint16_t id = 0;
  std::variant<int64_t, fields::Decimal, std::string> value;
};

std::vector<uint8_t> field_list(std::initializer_list<TestField> entries);
std::vector<uint8_t> field_list(const std::vector<TestField>& entries);

// Equal ids, types and values; `why` says the first difference.
bool same_fields(const fields::FieldImage& a, const fields::FieldImage& b, std::string* why = nullptr);
// The INT value of field `id`, or nullopt when absent or not an INT.
std::optional<int64_t> int_field(const fields::FieldImage& image, uint16_t id);
std::optional<std::string> string_field(const fields::FieldImage& image, uint16_t id);
std::string describe(const fields::FieldImage& image);  // "{1:int 5, 3:string 'x'}"

}  // namespace tw::testing
