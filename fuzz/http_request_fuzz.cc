// Fuzzes the HTTP request parser (src/http/request_parser.h, llhttp) and the
// WebSocket upgrade checks (src/websocket/handshake.h) as the listener uses
// them: arbitrary bytes fed in pieces, request after request on one
// connection, each complete request with an upgrade put through
// answer_upgrade. A request must respect the bounds (headers and body), an
// error must carry a 4xx status, and consumed never passes the input.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "http/request_parser.h"
#include "websocket/handshake.h"

namespace {

using namespace tw;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "http_request_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t chunk = 1 + data[0] % 128;
  std::string input(reinterpret_cast<const char*>(data + 1), size - 1);
  http::RequestLimits limits{512, 256};
  http::RequestParser parser(limits);
  std::string pending;
  size_t fed = 0;
  while (fed < input.size()) {
    const size_t n = std::min(chunk, input.size() - fed);
    pending.append(input, fed, n);
    fed += n;
    while (!pending.empty()) {
      const auto outcome = parser.feed(pending);
      if (outcome.consumed > pending.size()) fail("consumed more than its input");
      if (outcome.status == http::RequestParser::Status::Error) {
        if (outcome.http_status < 400 || outcome.http_status > 499 || outcome.error.empty()) fail("error without a 4xx status");
        return 0;
      }
      if (outcome.status == http::RequestParser::Status::NeedMore) {
        pending.clear();
        break;
      }
      const http::Request& r = parser.request();
      if (r.body.size() > limits.max_body_bytes) fail("body over its bound");
      if (r.path.empty() || r.path.front() != '/') fail("path without its leading slash");
      websocket::UpgradeRequest asked{r.method, r.header("upgrade"), r.header("connection"),
                                      r.header("sec-websocket-version"), r.header("sec-websocket-key"),
                                      r.header("sec-websocket-protocol")};
      const auto answer = websocket::answer_upgrade(asked, "mqtt");
      if (answer.status == 101 && (answer.accept.size() != 28 || answer.protocol != "mqtt")) fail("bad 101 answer");
      if (answer.status != 101 && answer.error.empty()) fail("refusal without a reason");
      if (parser.upgrade()) return 0;  // the connection leaves HTTP here
      pending.erase(0, outcome.consumed);
      parser.next();
    }
  }
  return 0;
}
