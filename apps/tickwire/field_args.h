// `--field NAME=VALUE` arguments of `tickwire pub`.
//   BID=189.25           a dictionary name; the dictionary gives the type
//   4001:decimal=1.5     a numeric id with an explicit type (int, decimal, string, bytes, time)
// Values are parsed by fields::add_parsed: decimals exact, time as ns / ISO-8601 / "now".
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "fields/dictionary.h"

namespace tw::cli {

struct FieldAssignment {
  fields::FieldDef def;
  std::string value;
};

Result<FieldAssignment> parse_field_assignment(std::string_view text, const fields::Dictionary& dict);
// Encodes all assignments as one field list payload.
Result<std::vector<uint8_t>> build_field_list(const std::vector<std::string>& assignments,
                                              const fields::Dictionary& dict);

}  // namespace tw::cli
