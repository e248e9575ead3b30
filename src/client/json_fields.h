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

Result<JsonMessage> parse_json_message(std::string_view text, const fields::Dictionary& dict);

}  // namespace tw::client
