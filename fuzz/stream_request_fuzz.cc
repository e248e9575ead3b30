// Fuzzes what a browser sends on /stream (docs/stream.md): any bytes as one
// text message. A request that parses is answered as the session would
// (ack_json); one that does not has a reason. Any crash or sanitizer report aborts.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "stream/reply.h"
#include "stream/request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tw::Result<tw::stream::Request> request = tw::stream::parse_request(text);
  if (!request) {
    if (request.error().message.empty()) std::abort();
    return 0;
  }
  if (request->conflate_ms > tw::stream::kMaxConflateMs) std::abort();
  const std::string ack = tw::stream::ack_json(*request, tw::wire::Code::Ok, "");
  if (ack.empty() || ack.front() != '{') std::abort();
  return 0;
}
