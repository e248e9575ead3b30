// A payload as text, for people and terminals: the field-list and opaque
// forms that `tickwire sub` prints and the broker's JSON renderings build on
// (fields/json.h). Not for the hot path: they allocate.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "tickwire/fields/dictionary.h"
#include "tickwire/wire/protocol.h"

namespace tw::fields {

// "BID=189.25 ASK=189.27" for a field list; data="..." or hex=... for opaque bytes.
std::string format_payload(wire::PayloadKind kind, std::span<const uint8_t> payload, const Dictionary& dict);
// A field's display name: the dictionary name, or "#ID" when unknown.
std::string field_name(uint16_t id, const Dictionary& dict);
bool is_printable(std::span<const uint8_t> bytes);
std::string hex(std::span<const uint8_t> bytes);
// Text from the network made safe to print on a terminal: control characters
// (C0, DEL and the C1 range U+0080-U+009F, which includes CSI) and bytes that
// are not valid UTF-8 become \xNN (C1: \u{NN}), so that no topic, name or
// value can move the cursor, clear the screen or retitle the window.
// Printable UTF-8 passes as is.
std::string terminal_safe(std::string_view text);

}  // namespace tw::fields
