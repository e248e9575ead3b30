// The bytes of a Response on an HTTP/1.1 connection: status line, headers, body.
#pragma once
#include <string>
#include <string_view>

#include "http/route.h"

namespace tw::http {

// "Not Found" for 404; "" for a status this listener never sends.
std::string_view reason_phrase(int status);

// Status line and headers (Content-Type, Content-Length unless it is an
// event stream, the response's own headers, Connection) followed by the body.
// `head_only`: a HEAD request, the headers without the body.
std::string serialize(const Response& response, bool keep_alive, bool head_only = false);

// One server-sent event: every line of `data` as a "data:" line, then a blank line.
std::string sse_event(std::string_view data);

}  // namespace tw::http
