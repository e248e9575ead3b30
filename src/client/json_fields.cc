#include "client/json_fields.h"

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
    assignments.push_back(name + "=" + *value_as_text);
  }
  auto list = fields::build_field_list(assignments, dict);
  if (!list) return list.error();
  message.field_list = std::move(*list);
  return message;
}

}  // namespace tw::client
