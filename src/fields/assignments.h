// NAME=VALUE field assignments: `tickwire pub --field` and the admin API's
// REST publish (src/admin) build field lists from them.
//   BID=189.25           a dictionary name; the dictionary gives the type
//   4001:decimal=1.5     a numeric id with an explicit type (int, decimal, string, bytes, time)
// Values are parsed by fields::add_parsed: decimals exact, time as ns / ISO-8601 / "now".
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tickwire/base/result.h"
#include "tickwire/fields/dictionary.h"

namespace tw::fields {

struct FieldAssignment {
  FieldDef def;
  std::string value;
};

Result<FieldAssignment> parse_field_assignment(std::string_view text, const Dictionary& dict);
// Encodes all assignments as one field list payload.
Result<std::vector<uint8_t>> build_field_list(const std::vector<std::string>& assignments,
                                              const Dictionary& dict);

}  // namespace tw::fields
