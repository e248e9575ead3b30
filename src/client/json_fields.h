// A field list from one JSON object in the shape `tickwire sub --json` prints:
// {"type":"update","topic":"EQ/AAPL","seq":13,"fields":{"BID":"189.26"}}. The
// "fields" member is the list ({"BID":"189.25","ASK":189.3,"4001:int":5},
// names as `tickwire pub --field` takes them); an object without one is the
// list itself. Shared by REST publish (src/admin) and `tickwire pub --json`.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "fields/dictionary.h"

namespace tw::client {

struct JsonMessage {
  std::string type;               // the object's "type" ("image", "update", "status"), "" when none
  std::vector<uint8_t> field_list;  // empty for a "status" object, which carries no fields
};

// A field the dictionary does not name comes as `sub --json` prints it,
// "#4001": its type is the JSON value's (an integer: int, another number:
// decimal, a string: string); "4001:decimal" names the type.
Result<JsonMessage> parse_json_message(std::string_view text, const fields::Dictionary& dict);

// A dictionary as the admin API's GET /api/v1/fields serves it and `tickwire
// fields --json` prints it, by id: {"fields":[{"id":22,"name":"BID","type":"decimal"},...]}.
std::string dictionary_json(const fields::Dictionary& dict);
Result<fields::Dictionary> parse_dictionary_json(std::string_view text);

}  // namespace tw::client
