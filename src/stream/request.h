// The messages a browser sends on /stream (docs/stream.md): one JSON object
// per WebSocket text message, {"op": ...}. Decoded here into a Request, with
// a clear reason for what is refused; the session (stream_session.h) acts on it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tickwire/base/result.h"
#include "tickwire/wire/protocol.h"

namespace tw::stream {

enum class Op { Login, Subscribe, Unsubscribe };

struct Request {
  Op op = Op::Subscribe;
  std::optional<uint32_t> id;  // echoed in the answer when given
  std::string topic;           // subscribe, unsubscribe: a native pattern ("DEMO/EQ/>")
  uint32_t conflate_ms = 0;    // subscribe: at most one merged refresh per channel per interval; 0 = real time
  wire::SlowPolicy policy = wire::SlowPolicy::Default;  // subscribe: "conflate", "drop" or "disconnect"
  std::string user;            // login
  std::string password;        // login
};

// The longest conflation interval a browser may ask for (one hour).
inline constexpr uint32_t kMaxConflateMs = 3'600'000;

// Decodes one message. An error names what is wrong ("'topic' must be a string").
Result<Request> parse_request(std::string_view text);
const char* op_name(Op op);

}  // namespace tw::stream
