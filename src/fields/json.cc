#include "fields/json.h"

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "fields/assignments.h"
#include "tickwire/fields/field_list.h"
#include "tickwire/fields/payload_text.h"

namespace tw::fields {

namespace {

// A JSON value as the text add_parsed reads: strings as they are, numbers as written.
std::optional<std::string> value_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  return std::nullopt;
}

// "#4001" (how `sub --json` names a field the dictionary does not) as
// "#4001:TYPE", the type from its value; other names as they are.
std::string typed_name(const std::string& name, const nlohmann::json& value, const Dictionary& dict) {
  if (name.size() < 2 || name.front() != '#' || name.find(':') != std::string::npos || dict.by_name(name)) {
    return name;
  }
  const char* type = value.is_number_integer() ? "int" : value.is_number() ? "decimal" : "string";
  return name + ":" + type;
}

nlohmann::ordered_json json_value(const FieldValue& v) {
  if (v.type == FieldType::Int) return v.i;
  return format_value(v);  // decimals exact, times ISO-8601, bytes hex
}

const char* type_of(MessageView::Kind kind) {
  switch (kind) {
    case MessageView::Kind::Image: return "image";
    case MessageView::Kind::Update: return "update";
    case MessageView::Kind::Status: break;
  }
  return "status";
}

}  // namespace

std::string message_json(const MessageView& m, const Dictionary& dict) {
  nlohmann::ordered_json j;
  j["type"] = type_of(m.kind);
  j["topic"] = std::string(m.topic);
  j["channel"] = m.channel;
  if (m.kind == MessageView::Kind::Status) {
    j["state"] = wire::state_name(m.state);
    j["code"] = wire::code_name(m.code);
    j["text"] = std::string(m.text);
    return j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  }
  j["seq"] = m.seq;
  if (m.gap) j["gap"] = true;
  if (m.payload_kind == wire::PayloadKind::Opaque) {
    if (is_printable(m.payload)) {
      j["data"] = std::string(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
    } else {
      j["hex"] = hex(m.payload);
    }
  } else {
    nlohmann::ordered_json listed = nlohmann::ordered_json::object();
    const bool ok = for_each(m.payload, [&](uint16_t id, const FieldValue& v) { listed[field_name(id, dict)] = json_value(v); });
    j["fields"] = std::move(listed);
    if (!ok) j["error"] = "malformed field list";
  }
  return j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

Result<JsonMessage> parse_json_message(std::string_view text, const Dictionary& dict) {
  const nlohmann::json body = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return Error{"not a JSON object"};
  JsonMessage message;
  if (body.contains("type") && body["type"].is_string()) message.type = body["type"].get<std::string>();
  if (message.type == "status") return message;
  if (!body.contains("fields") && (body.contains("data") || body.contains("hex"))) {
    return Error{"an opaque message (\"data\" or \"hex\") is not a field list"};
  }
  const nlohmann::json& listed = body.contains("fields") ? body["fields"] : body;
  if (!listed.is_object()) return Error{"\"fields\" is not a JSON object"};
  std::vector<std::string> assignments;
  for (const auto& [name, value] : listed.items()) {
    auto value_as_text = value_text(value);
    if (!value_as_text) return Error{"field '" + name + "': a value is a string or a number"};
    assignments.push_back(typed_name(name, value, dict) + "=" + *value_as_text);
  }
  auto list = build_field_list(assignments, dict);
  if (!list) return list.error();
  message.field_list = std::move(*list);
  return message;
}

std::string dictionary_json(const Dictionary& dict) {
  std::vector<const FieldDef*> by_id;
  for (const FieldDef& def : dict.all()) by_id.push_back(&def);
  std::sort(by_id.begin(), by_id.end(), [](const auto* a, const auto* b) { return a->id < b->id; });
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const FieldDef* def : by_id)
    list.push_back({{"id", def->id}, {"name", def->name}, {"type", type_name(def->type)}});
  return nlohmann::ordered_json{{"fields", std::move(list)}}.dump();
}

Result<Dictionary> parse_dictionary_json(std::string_view text) {
  const nlohmann::json body = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object() || !body.contains("fields") || !body["fields"].is_array()) {
    return Error{"not a field list: expected {\"fields\":[...]}"};
  }
  Dictionary dict;
  for (const nlohmann::json& f : body["fields"]) {
    FieldDef def;
    if (!f.is_object() || !f.value("id", nlohmann::json()).is_number_unsigned() ||
        !f.value("name", nlohmann::json()).is_string() || !f.value("type", nlohmann::json()).is_string() ||
        f["id"].get<uint64_t>() > UINT16_MAX || !parse_type(f["type"].get<std::string>(), def.type)) {
      return Error{"a field is not {\"id\":N,\"name\":\"...\",\"type\":\"...\"}: " + f.dump()};
    }
    def.id = static_cast<uint16_t>(f["id"].get<uint64_t>());
    def.name = f["name"].get<std::string>();
    if (Status added = dict.add(std::move(def)); !added) return added.error();
  }
  return dict;
}

}  // namespace tw::fields
