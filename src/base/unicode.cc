#include "base/unicode.h"

#include <cstdio>
#include <cstring>

namespace tw::unicode {
namespace {

struct Range {
  char32_t first;
  char32_t last;
};

// Cc, Cf (DerivedGeneralCategory.txt, Unicode 15.1), Zl and Zp, in order.
constexpr Range kHidden[] = {
    {0x0000, 0x001F},   {0x007F, 0x009F},   {0x00AD, 0x00AD},   {0x0600, 0x0605},   {0x061C, 0x061C},
    {0x06DD, 0x06DD},   {0x070F, 0x070F},   {0x0890, 0x0891},   {0x08E2, 0x08E2},   {0x180E, 0x180E},
    {0x200B, 0x200F},   {0x2028, 0x202E},   {0x2060, 0x2064},   {0x2066, 0x206F},   {0xFEFF, 0xFEFF},
    {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD}, {0x110CD, 0x110CD}, {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3},
    {0x1D173, 0x1D17A}, {0xE0001, 0xE0001}, {0xE0020, 0xE007F},
};

bool is_noncharacter(char32_t c) { return (c >= 0xFDD0 && c <= 0xFDEF) || (c & 0xFFFE) == 0xFFFE; }

bool is_continuation(uint8_t b) { return (b & 0xC0) == 0x80; }

// All ASCII and none of it a control: the common case, 8 bytes at a time.
// With every high bit clear, a byte below 0x20 borrows when 0x20 is
// subtracted from it, and DEL is the byte that XOR 0x7F turns to zero.
bool is_plain_ascii_word(const char* s) {
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  uint64_t word;
  std::memcpy(&word, s, sizeof(word));
  if ((word & kHigh) != 0) return false;
  const uint64_t below_space = (word - 0x20 * kOnes) & ~word & kHigh;
  const uint64_t del = word ^ (0x7F * kOnes);
  const uint64_t is_del = (del - kOnes) & ~del & kHigh;
  return (below_space | is_del) == 0;
}

}  // namespace

size_t decode(std::string_view bytes, char32_t& code_point) {
  if (bytes.empty()) return 0;
  const auto* s = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t left = bytes.size();
  const uint8_t b = s[0];
  if (b < 0x80) {
    code_point = b;
    return 1;
  }
  if (b < 0xC2) return 0;  // a continuation byte, or an overlong 2-byte lead
  if (b < 0xE0) {
    if (left < 2 || !is_continuation(s[1])) return 0;
    code_point = char32_t(b & 0x1F) << 6 | (s[1] & 0x3F);
    return 2;
  }
  if (b < 0xF0) {
    if (left < 3 || !is_continuation(s[1]) || !is_continuation(s[2])) return 0;
    if (b == 0xE0 && s[1] < 0xA0) return 0;   // overlong
    if (b == 0xED && s[1] >= 0xA0) return 0;  // a surrogate, U+D800..U+DFFF
    code_point = char32_t(b & 0x0F) << 12 | char32_t(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
    return 3;
  }
  if (b < 0xF5) {
    if (left < 4 || !is_continuation(s[1]) || !is_continuation(s[2]) || !is_continuation(s[3])) return 0;
    if (b == 0xF0 && s[1] < 0x90) return 0;   // overlong
    if (b == 0xF4 && s[1] >= 0x90) return 0;  // above U+10FFFF
    code_point = char32_t(b & 0x07) << 18 | char32_t(s[1] & 0x3F) << 12 | char32_t(s[2] & 0x3F) << 6 | (s[3] & 0x3F);
    return 4;
  }
  return 0;
}

bool is_hidden(char32_t c) {
  if (is_noncharacter(c)) return true;
  for (const Range& r : kHidden) {
    if (c < r.first) return false;
    if (c <= r.last) return true;
  }
  return false;
}

namespace {

// Walks `text`, calling on_fault(at, length, code point) at each fault (length
// 0: a byte that is not UTF-8) until it returns false; the first fault.
template <typename OnFault>
TextFault walk(std::string_view text, OnFault&& on_fault) {
  size_t i = 0;
  TextFault first = TextFault::None;
  while (i < text.size()) {
    if (i + 8 <= text.size() && is_plain_ascii_word(text.data() + i)) {
      i += 8;
      continue;
    }
    char32_t c = 0;
    const size_t len = decode(text.substr(i), c);
    const TextFault fault = len == 0 ? TextFault::NotUtf8 : is_hidden(c) ? TextFault::Hidden : TextFault::None;
    if (fault != TextFault::None && first == TextFault::None) first = fault;
    if (fault != TextFault::None && !on_fault(i, len, c)) return first;
    i += len == 0 ? 1 : len;
  }
  return first;
}

}  // namespace

bool valid_utf8(std::string_view text) {
  char32_t c = 0;
  for (size_t i = 0; i < text.size();) {
    uint64_t word;  // ASCII, 8 bytes at a time: most topics and names are all ASCII
    if (i + 8 <= text.size() && (std::memcpy(&word, text.data() + i, 8), (word & 0x8080808080808080ull) == 0)) {
      i += 8;
      continue;
    }
    const size_t len = decode(text.substr(i), c);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

TextFault find_fault(std::string_view text) {
  return walk(text, [](size_t, size_t, char32_t) { return false; });
}

bool needs_escape(std::string_view text) {
  return text.find('\\') != std::string_view::npos || find_fault(text) != TextFault::None;
}

std::string escape(std::string_view text) {
  if (!needs_escape(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  size_t copied = 0;
  auto copy_to = [&](size_t end) {
    for (size_t j = copied; j < end; ++j) {
      if (text[j] == '\\') out += '\\';
      out += text[j];
    }
  };
  walk(text, [&](size_t at, size_t len, char32_t c) {
    copy_to(at);
    char code[16];
    if (len == 0 || c < 0x80) {  // a byte that is not UTF-8, or an ASCII control
      std::snprintf(code, sizeof code, "\\x%02X", static_cast<unsigned>(static_cast<uint8_t>(text[at])));
    } else {
      std::snprintf(code, sizeof code, "\\u{%04X}", static_cast<unsigned>(c));
    }
    out += code;
    copied = at + (len == 0 ? 1 : len);
    return true;
  });
  copy_to(text.size());
  return out;
}

}  // namespace tw::unicode
