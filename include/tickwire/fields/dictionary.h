// The field dictionary: name <-> id <-> type. A built-in default covers the
// common market-data fields (ids follow the conventional RDM numbering); a
// file can replace it.
//
// File format, one field per line, '#' starts a comment:
//   NAME  ID  TYPE        e.g.  BID  22  decimal
// TYPE is one of int, decimal, string, bytes, time.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tickwire/base/result.h"
#include "tickwire/fields/field_list.h"

namespace tw::fields {

struct FieldDef {
  std::string name;
  uint16_t id = 0;
  FieldType type = FieldType::Int;
};

class Dictionary {
 public:
  static const Dictionary& builtin();
  // Errors name the file and line.
  // With `base`, the file extends a copy of it: a name or id `base` has
  // already is an error on its line (tickwired's fields_file over the built-in one).
  static Result<Dictionary> load(const std::string& path, const Dictionary* base = nullptr);
  static Result<Dictionary> parse(std::string_view text, const std::string& source_name,
                                  const Dictionary* base = nullptr);

  const FieldDef* by_name(std::string_view name) const;
  const FieldDef* by_id(uint16_t id) const;
  const std::vector<FieldDef>& all() const { return defs_; }
  // Adds a definition; fails on a duplicate name or id.
  Status add(FieldDef def);

 private:
  std::vector<FieldDef> defs_;
  std::unordered_map<std::string, size_t> by_name_;
  std::unordered_map<uint16_t, size_t> by_id_;
};

// The dictionary the broker names fields with (MQTT and /stream JSON, the
// admin API's REST publish and snapshot, GET /api/v1/fields): the built-in
// one unless set. tickwired sets it once, at start-up, to the built-in one
// extended by fields_file, before any thread that reads it starts.
const Dictionary& broker_dictionary();
void set_broker_dictionary(Dictionary dict);

// Text forms for CLIs and logs.
std::string format_value(const FieldValue& v);  // decimal exact, time as ISO-8601 UTC with ns, bytes as hex
// Parses `text` as a value of `type` and adds it to the writer; false if it does not parse.
// Time accepts integer nanoseconds or "now".
bool add_parsed(FieldListWriter& w, const FieldDef& def, std::string_view text);

}  // namespace tw::fields
