// Fuzzes the WebSocket frame reader (src/websocket/frame.h) as a server
// reads a client: arbitrary bytes, cut at a size the input chooses, stepped
// through to the end. The reader must never read outside its input, never
// pass on more message bytes than max_message per message, and every Data
// step's bytes must lie inside the input (binary) or be a whole valid text
// message. Then the same bytes through websocket::Transport's reading path
// is covered by the unit tests; here the codec alone. Any crash, sanitizer
// report or broken invariant aborts.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "websocket/frame.h"
#include "wire/utf8.h"

namespace {

using namespace tw::websocket;

constexpr uint64_t kMaxMessage = 4096;  // small: the fuzzer also reaches 1009

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "websocket_frame_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t chunk = 1 + data[0] % 64;  // how the bytes arrive
  const Role role = (data[0] & 0x80) != 0 ? Role::Client : Role::Server;
  std::vector<uint8_t> stream(data + 1, data + size);
  Reader reader({role, kMaxMessage});
  std::vector<uint8_t> buffer;
  size_t fed = 0;
  uint64_t message_bytes = 0;
  while (fed < stream.size() || !buffer.empty()) {
    const size_t n = std::min(chunk, stream.size() - fed);
    buffer.insert(buffer.end(), stream.begin() + fed, stream.begin() + fed + n);
    fed += n;
    size_t pos = 0;
    for (;;) {
      const Reader::Step s = reader.next({buffer.data() + pos, buffer.size() - pos}, 1 + fed % 97);
      if (s.consumed > buffer.size() - pos) fail("consumed more than its input");
      pos += s.consumed;
      if (s.kind == Reader::Kind::Close || s.kind == Reader::Kind::Error) return 0;
      if (s.kind == Reader::Kind::NeedMore) {
        if (s.consumed == 0) break;
        continue;
      }
      if (s.kind == Reader::Kind::Data) {
        if (s.opcode == Opcode::Text) {
          std::string_view text(reinterpret_cast<const char*>(s.payload.data()), s.payload.size());
          if (!s.message_end || !tw::wire::valid_utf8(text)) fail("text passed on before its end or not UTF-8");
          if (text.size() > kMaxMessage) fail("text message over max_message");
        } else {
          message_bytes += s.payload.size();
          if (message_bytes > kMaxMessage) fail("binary message over max_message");
          if (s.message_end) message_bytes = 0;
        }
      }
      if ((s.kind == Reader::Kind::Ping || s.kind == Reader::Kind::Pong) && s.payload.size() > kMaxControlPayload) {
        fail("control payload over 125 bytes");
      }
    }
    buffer.erase(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(pos));
    if (fed == stream.size() && pos == 0) break;
  }
  return 0;
}
