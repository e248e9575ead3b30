// Human and machine text forms of received messages, used by `tickwire sub`,
// `tickwire snapshot` and the examples. Not for the hot path: they allocate.
//
// Text:  IMAGE  DEMO/EQ/AAPL seq=12 BID=189.25 ASK=189.27 #9999=5
//        UPDATE DEMO/EQ/AAPL seq=13 BID=189.26
//        STATUS DEMO/EQ/AAPL STALE code=SERVER_SHUTDOWN provider gone
//        UPDATE DEMO/TXT seq=3 data="hello"        (opaque, printable)
//        UPDATE DEMO/BIN seq=4 hex=00ff10          (opaque, binary)
// JSON:  {"type":"update","topic":"DEMO/EQ/AAPL","seq":13,"channel":7,
//         "fields":{"BID":"189.26"}}   decimals and times as exact strings,
//         ints as numbers; "gap":true on a gap; opaque payloads as "data" or "hex".
#pragma once
#include <string>
#include <string_view>

#include "client/message.h"
#include "fields/dictionary.h"

namespace tw::client {

std::string format_text(const Message& msg, const fields::Dictionary& dict);
std::string format_json(const Message& msg, const fields::Dictionary& dict);
// "BID=189.25 ASK=189.27" for a field list; data="..." or hex=... for opaque bytes.
std::string format_payload(wire::PayloadKind kind, std::span<const uint8_t> payload,
                           const fields::Dictionary& dict);
// A field's display name: the dictionary name, or "#ID" when unknown.
std::string field_name(uint16_t id, const fields::Dictionary& dict);
bool is_printable(std::span<const uint8_t> bytes);
// Text from the network made safe to print on a terminal: control characters
// (C0, DEL and the C1 range U+0080-U+009F, which includes CSI) and bytes that
// are not valid UTF-8 become \xNN (C1: \u{NN}), so that no topic, name or
// value can move the cursor, clear the screen or retitle the window.
// Printable UTF-8 passes as is.
std::string terminal_safe(std::string_view text);

}  // namespace tw::client
