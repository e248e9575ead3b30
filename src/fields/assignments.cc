#include "fields/assignments.h"

#include <charconv>

#include "tickwire/wire/protocol.h"

namespace tw::fields {

namespace {

// "4001:decimal" -> a definition for an id the dictionary does not name.
bool parse_numeric_field(std::string_view key, FieldDef& def) {
  size_t colon = key.find(':');
  if (colon == std::string_view::npos) return false;
  std::string_view id_text = key.substr(0, colon);
  if (!id_text.empty() && id_text.front() == '#') id_text.remove_prefix(1);
  unsigned id = 0;
  auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
  if (id_text.empty() || ec != std::errc{} || end != id_text.data() + id_text.size() || id > UINT16_MAX)
    return false;
  if (!parse_type(key.substr(colon + 1), def.type)) return false;
  def.id = static_cast<uint16_t>(id);
  def.name = "#" + std::to_string(id);
  return true;
}

}  // namespace

Result<FieldAssignment> parse_field_assignment(std::string_view text, const Dictionary& dict) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return Error{"field '" + std::string(text) + "' is not NAME=VALUE"};
  std::string_view key = text.substr(0, eq);
  FieldAssignment out;
  out.value.assign(text.substr(eq + 1));
  if (const FieldDef* def = dict.by_name(key)) {
    out.def = *def;
    return out;
  }
  if (parse_numeric_field(key, out.def)) return out;
  return Error{"unknown field '" + std::string(key) +
               "' (not in the dictionary; use ID:TYPE=VALUE for other fields)"};
}

Result<std::vector<uint8_t>> build_field_list(const std::vector<std::string>& assignments,
                                              const Dictionary& dict) {
  std::vector<uint8_t> buffer(wire::kDefaultMaxFrame);
  FieldListWriter writer(buffer);
  std::vector<uint16_t> seen;
  for (const std::string& text : assignments) {
    auto field = parse_field_assignment(text, dict);
    if (!field) return field.error();
    for (uint16_t id : seen)
      if (id == field->def.id) return Error{"field '" + field->def.name + "' given twice"};
    seen.push_back(field->def.id);
    if (!add_parsed(writer, field->def, field->value))
      return Error{"cannot read '" + field->value + "' as " + type_name(field->def.type) + " for " +
                   field->def.name};
  }
  size_t size = writer.finish();
  if (size == 0) return Error{"field list too large"};
  buffer.resize(size);
  return buffer;
}

}  // namespace tw::fields
