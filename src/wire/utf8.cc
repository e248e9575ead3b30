#include "wire/utf8.h"

#include <cstdint>
#include <cstring>

namespace tw::wire {

namespace {

bool is_continuation(uint8_t b) { return (b & 0xC0) == 0x80; }

// The length of the sequence at `s` (valid, complete), or 0.
size_t sequence_length(const uint8_t* s, size_t left) {
  const uint8_t b = s[0];
  if (b < 0x80) return 1;
  if (b < 0xC2) return 0;  // a continuation byte, or an overlong 2-byte lead
  if (b < 0xE0) return left >= 2 && is_continuation(s[1]) ? 2 : 0;
  if (b < 0xF0) {
    if (left < 3 || !is_continuation(s[1]) || !is_continuation(s[2])) return 0;
    if (b == 0xE0 && s[1] < 0xA0) return 0;   // overlong
    if (b == 0xED && s[1] >= 0xA0) return 0;  // a surrogate, U+D800..U+DFFF
    return 3;
  }
  if (b < 0xF5) {
    if (left < 4 || !is_continuation(s[1]) || !is_continuation(s[2]) || !is_continuation(s[3])) return 0;
    if (b == 0xF0 && s[1] < 0x90) return 0;   // overlong
    if (b == 0xF4 && s[1] >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

bool valid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    // ASCII, 8 bytes at a time: most topics and names are all ASCII.
    if (i + 8 <= n) {
      uint64_t word;
      std::memcpy(&word, s + i, sizeof(word));
      if ((word & 0x8080808080808080ull) == 0) {
        i += 8;
        continue;
      }
    }
    const size_t len = sequence_length(s + i, n - i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

}  // namespace tw::wire
