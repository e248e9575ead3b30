// Fuzzes the frame splitter and every body decoder. Arbitrary bytes are cut
// into frames with split_frame, as a connection would; each frame is decoded
// with the decoder for its type, and each frame that decodes must re-encode to
// the very same bytes. Any crash, sanitizer report or mismatch aborts.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "reencode.h"
#include "tickwire/wire/codec.h"

namespace {

using namespace tw::wire;

// Small enough that the fuzzer also reaches TooLarge with short inputs.
constexpr uint32_t kFuzzMaxFrame = 4096;

[[noreturn]] void fail(const char* what, const Frame& f) {
  std::fprintf(stderr, "frame_decoder_fuzz: %s (type 0x%02x, size %zu)\n", what, static_cast<unsigned>(f.type),
               f.size);
  std::abort();
}

void check_frame(std::span<const uint8_t> frame_bytes, const Frame& f) {
  if (f.size != frame_bytes.size() || f.body.size() + kHeaderSize != f.size) fail("frame size inconsistent", f);
  if (f.body.data() != frame_bytes.data() + kHeaderSize) fail("body does not follow the header", f);
  // Every proper prefix of a frame that is at least a header must need more bytes.
  Frame partial;
  if (split_frame(frame_bytes.first(f.size - 1), kFuzzMaxFrame, partial) != SplitResult::NeedMore) {
    fail("a proper prefix of a frame was not NeedMore", f);
  }
  static std::vector<uint8_t> out(kFuzzMaxFrame);
  size_t n = tw::wiretest::reencode(f, out);
  if (n == 0) return;  // not decodable: rejected, which is fine
  if (!tw::wiretest::same_frame_bytes(frame_bytes, std::span<const uint8_t>(out.data(), n), f.type)) {
    fail("decode then encode is not byte-identical", f);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  if (size >= 4) {
    uint32_t length;
    std::memcpy(&length, data, 4);
    if (peek_length(in) != length) std::abort();
  }
  for (;;) {
    Frame f;
    SplitResult r = split_frame(in, kFuzzMaxFrame, f);
    if (r != SplitResult::Frame) break;
    if (f.size > in.size()) fail("frame longer than its input", f);
    check_frame(in.first(f.size), f);
    in = in.subspan(f.size);
  }
  return 0;
}
