// What the broker answers a browser's request on /stream (docs/stream.md),
// beside the channel messages of json_encoder.h:
//   {"type":"ack","id":1,"op":"subscribe","topic":"DEMO/EQ/>","code":"OK"}
//   {"type":"ack","id":2,"op":"subscribe","topic":"X/>","code":"NOT_AUTHORIZED","text":"..."}
//   {"type":"error","code":"MALFORMED_FRAME","text":"unknown op 'x' ..."}   (then the Close frame)
#pragma once
#include <string>
#include <string_view>

#include "stream/request.h"
#include "tickwire/wire/protocol.h"

namespace tw::stream {

std::string ack_json(const Request& request, wire::Code code, std::string_view text);
std::string error_json(wire::Code code, std::string_view text);

}  // namespace tw::stream
