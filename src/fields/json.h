// Channel messages and field lists as JSON. A field list from one JSON
// object in the shape `tickwire sub --json` prints:
// {"type":"update","topic":"EQ/AAPL","seq":13,"fields":{"BID":"189.26"}}. The
// "fields" member is the list ({"BID":"189.25","ASK":189.3,"4001:int":5},
// names as `tickwire pub --field` takes them); an object without one is the
// list itself. Shared by REST publish (src/admin) and `tickwire pub --json`.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tickwire/base/result.h"
#include "tickwire/fields/dictionary.h"
#include "tickwire/wire/protocol.h"

namespace tw::fields {

// One channel message as `tickwire sub --json` prints it, and as the MQTT
// listener, the browser stream and the admin API's snapshot send it:
// {"type":"update","topic":"DEMO/EQ/AAPL","channel":7,"seq":13,"fields":{"BID":"189.26"}}
// decimals and times as exact strings, ints as numbers; "gap":true on a gap;
// opaque payloads as "data" (printable) or "hex"; a status as
// {"type":"status",...,"state":"STALE","code":"PROVIDER_LOST","text":"..."}.
struct MessageView {
  enum class Kind : uint8_t { Image, Update, Status };
  Kind kind = Kind::Update;
  std::string_view topic;
  uint32_t channel = 0;
  uint64_t seq = 0;
  bool gap = false;
  wire::PayloadKind payload_kind = wire::PayloadKind::FieldList;
  std::span<const uint8_t> payload;
  // Status only.
  wire::ChannelState state = wire::ChannelState::Ok;
  wire::Code code = wire::Code::Ok;
  std::string_view text;
};
std::string message_json(const MessageView& m, const Dictionary& dict);

struct JsonMessage {
  std::string type;               // the object's "type" ("image", "update", "status"), "" when none
  std::vector<uint8_t> field_list;  // empty for a "status" object, which carries no fields
};

// A field the dictionary does not name comes as `sub --json` prints it,
// "#4001": its type is the JSON value's (an integer: int, another number:
// decimal, a string: string); "4001:decimal" names the type.
Result<JsonMessage> parse_json_message(std::string_view text, const Dictionary& dict);

// A dictionary as the admin API's GET /api/v1/fields serves it and `tickwire
// fields --json` prints it, by id: {"fields":[{"id":22,"name":"BID","type":"decimal"},...]}.
std::string dictionary_json(const Dictionary& dict);
Result<Dictionary> parse_dictionary_json(std::string_view text);

}  // namespace tw::fields
