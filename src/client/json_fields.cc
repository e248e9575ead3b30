#include "client/json_fields.h"

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "fields/assignments.h"

namespace tw::client {

namespace {

// A JSON value as the text fields::add_parsed reads: strings as they are, numbers as written.
std::optional<std::string> value_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  return std::nullopt;
}

// "#4001" (how `sub --json` names a field the dictionary does not) as
// "#4001:TYPE", the type from its value; other names as they are.
std::string typed_name(const std::string& name, const nlohmann::json& value, const fields::Dictionary& dict) {
  if (name.size() < 2 || name.front() != '#' || name.find(':') != std::string::npos || dict.by_name(name)) {
    return name;
  }
  const char* type = value.is_number_integer() ? "int" : value.is_number() ? "decimal" : "string";
  return name + ":" + type;
}

}  // namespace

Result<JsonMessage> parse_json_message(std::string_view text, const fields::Dictionary& dict) {
  const nlohmann::json body = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return Error{"not a JSON object"};
  JsonMessage message;
  if (body.contains("type") && body["type"].is_string()) message.type = body["type"].get<std::string>();
  if (message.type == "status") return message;
  if (!body.contains("fields") && (body.contains("data") || body.contains("hex"))) {
    return Error{"an opaque message (\"data\" or \"hex\") is not a field list"};
  }
  const nlohmann::json& fields = body.contains("fields") ? body["fields"] : body;
  if (!fields.is_object()) return Error{"\"fields\" is not a JSON object"};
  std::vector<std::string> assignments;
  for (const auto& [name, value] : fields.items()) {
    auto value_as_text = value_text(value);
    if (!value_as_text) return Error{"field '" + name + "': a value is a string or a number"};
    assignments.push_back(typed_name(name, value, dict) + "=" + *value_as_text);
  }
  auto list = fields::build_field_list(assignments, dict);
  if (!list) return list.error();
  message.field_list = std::move(*list);
  return message;
}

std::string dictionary_json(const fields::Dictionary& dict) {
  std::vector<const fields::FieldDef*> by_id;
  for (const fields::FieldDef& def : dict.all()) by_id.push_back(&def);
  std::sort(by_id.begin(), by_id.end(), [](const auto* a, const auto* b) { return a->id < b->id; });
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const fields::FieldDef* def : by_id)
    list.push_back({{"id", def->id}, {"name", def->name}, {"type", fields::type_name(def->type)}});
  return nlohmann::ordered_json{{"fields", std::move(list)}}.dump();
}

Result<fields::Dictionary> parse_dictionary_json(std::string_view text) {
  const nlohmann::json body = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object() || !body.contains("fields") || !body["fields"].is_array()) {
    return Error{"not a field list: expected {\"fields\":[...]}"};
  }
  fields::Dictionary dict;
  for (const nlohmann::json& f : body["fields"]) {
    fields::FieldDef def;
    if (!f.is_object() || !f.value("id", nlohmann::json()).is_number_unsigned() ||
        !f.value("name", nlohmann::json()).is_string() || !f.value("type", nlohmann::json()).is_string() ||
        f["id"].get<uint64_t>() > UINT16_MAX || !fields::parse_type(f["type"].get<std::string>(), def.type)) {
      return Error{"a field is not {\"id\":N,\"name\":\"...\",\"type\":\"...\"}: " + f.dump()};
    }
    def.id = static_cast<uint16_t>(f["id"].get<uint64_t>());
    def.name = f["name"].get<std::string>();
    if (Status added = dict.add(std::move(def)); !added) return added.error();
  }
  return dict;
}

}  // namespace tw::client
