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

#include "tickwire/client/message.h"
#include "tickwire/fields/dictionary.h"
#include "tickwire/fields/payload_text.h"

namespace tw::client {

std::string format_text(const Message& msg, const fields::Dictionary& dict);
std::string format_json(const Message& msg, const fields::Dictionary& dict);  // fields::message_json
// The payload forms, from fields/payload_text.h.
using fields::field_name;
using fields::format_payload;
using fields::is_printable;
using fields::terminal_safe;

}  // namespace tw::client
