// base/unicode: every code point decoded, classified and escaped, checked
// against an oracle that is not this code (Python's unicodedata), and
// escape() shown to be one line of visible text from which the input can be
// recovered, for every code point and for random bytes.
#include "base/unicode.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <random>
#include <set>
#include <string>

namespace tw::unicode {
namespace {

std::string encode(char32_t c) {
  std::string out;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
  return out;
}

bool is_surrogate(char32_t c) { return c >= 0xD800 && c <= 0xDFFF; }

// The inverse of escape(), written from its contract, not from its code.
std::string unescape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out += text[i];
      continue;
    }
    const char kind = text.at(++i);
    if (kind == '\\') {
      out += '\\';
    } else if (kind == 'x') {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      const size_t close = text.find('}', i);
      out += encode(static_cast<char32_t>(std::stoul(std::string(text.substr(i + 2, close - i - 2)), nullptr, 16)));
      i = close;
    }
  }
  return out;
}

// Escaped text is one line of visible UTF-8.
void expect_visible(const std::string& escaped) {
  EXPECT_TRUE(valid_utf8(escaped)) << escaped;
  EXPECT_EQ(find_fault(escaped), TextFault::None) << escaped;
}

TEST(Unicode, DecodesEveryCodePointAndRefusesSurrogates) {
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    const std::string bytes = encode(c);
    char32_t decoded = 0;
    const size_t length = decode(bytes, decoded);
    if (is_surrogate(c)) {
      ASSERT_EQ(length, 0u) << std::hex << static_cast<uint32_t>(c);
      continue;
    }
    ASSERT_EQ(length, bytes.size()) << std::hex << static_cast<uint32_t>(c);
    ASSERT_EQ(decoded, c);
  }
}

TEST(Unicode, RefusesMalformedUtf8) {
  for (std::string_view bad : {"\x80", "\xC0\x80", "\xC1\xBF", "\xE0\x80\x80", "\xED\xA0\x80", "\xF0\x80\x80\x80",
                               "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xFF", "\xE2\x80", "A\xC3"}) {
    EXPECT_FALSE(valid_utf8(bad)) << bad;
    EXPECT_EQ(find_fault(bad), TextFault::NotUtf8);
  }
}

// The general categories from Python's unicodedata (Unicode 14 in Debian 12's
// python3): every Cc, Cf, Zl and Zp code point is hidden; a hidden one is in
// those categories, a noncharacter, or unassigned there (assigned since).
TEST(Unicode, HiddenMatchesUnicodeData) {
  // One line per run of code points of one category: "Cf 8203 8207".
  const char* script =
      "import unicodedata as u\n"
      "runs=[]\n"
      "for c in range(0x110000):\n"
      "  k=u.category(chr(c))\n"
      "  if k not in ('Cc','Cf','Zl','Zp','Cn'): continue\n"
      "  if runs and runs[-1][0]==k and runs[-1][2]==c-1: runs[-1][2]=c\n"
      "  else: runs.append([k,c,c])\n"
      "for k,a,b in runs: print(k,a,b)\n";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(("python3 -c \"" + std::string(script) + "\"").c_str(), "r"), pclose);
  ASSERT_NE(pipe, nullptr);
  std::set<char32_t> hidden_there, unassigned_there;
  char kind[4];
  unsigned long first = 0, last = 0;
  while (std::fscanf(pipe.get(), "%3s %lu %lu", kind, &first, &last) == 3) {
    for (unsigned long c = first; c <= last; ++c) {
      (std::string(kind) == "Cn" ? unassigned_there : hidden_there).insert(static_cast<char32_t>(c));
    }
  }
  ASSERT_GT(hidden_there.size(), 200u) << "python3's unicodedata did not answer";
  size_t hidden_here = 0;
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (is_surrogate(cp)) continue;
    const bool noncharacter = (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE;
    if (hidden_there.count(cp)) {
      EXPECT_TRUE(is_hidden(cp)) << std::hex << "U+" << static_cast<uint32_t>(cp);
    }
    if (is_hidden(cp)) {
      ++hidden_here;
      EXPECT_TRUE(hidden_there.count(cp) || noncharacter || unassigned_there.count(cp)) << std::hex << "U+" << static_cast<uint32_t>(cp);
    }
  }
  EXPECT_GE(hidden_here, hidden_there.size());
}

TEST(Unicode, NamedExamples) {
  for (char32_t c : {U'\0', U'\n', U'\x1b', U'\x7f', U'\x85', U'\x9b', U'\xad', U'\u200b', U'\u200d', U'\u200e',
                     U'\u202e', U'\u2028', U'\u2029', U'\u2066', U'\ufeff', U'\U000e0041', U'\ufffe', U'\U0010ffff'}) {
    EXPECT_TRUE(is_hidden(c)) << std::hex << static_cast<uint32_t>(c);
  }
  for (char32_t c : {U'A', U' ', U'~', U'\xa0', U'\xe9', U'\u4e2d', U'\U0001f600', U'\u0301'}) {
    EXPECT_FALSE(is_hidden(c)) << std::hex << static_cast<uint32_t>(c);
  }
}

TEST(Unicode, EscapesEveryHiddenCodePointAndKeepsTheRest) {
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    if (is_surrogate(c)) continue;
    const std::string text = "a" + encode(c) + "b";
    const std::string escaped = escape(text);
    ASSERT_EQ(needs_escape(text), is_hidden(c) || c == U'\\') << std::hex << static_cast<uint32_t>(c);
    if (!needs_escape(text)) {
      ASSERT_EQ(escaped, text);
      continue;
    }
    expect_visible(escaped);
    ASSERT_EQ(unescape(escaped), text) << escaped;
  }
}

TEST(Unicode, EscapeOfRandomBytesIsVisibleAndReversible) {
  std::mt19937 random(42);
  for (int round = 0; round < 20'000; ++round) {
    std::string bytes(random() % 40, '\0');
    for (char& b : bytes) b = static_cast<char>(random() % 4 == 0 ? random() % 0x20 : random());
    const std::string escaped = escape(bytes);
    expect_visible(escaped);
    ASSERT_EQ(escaped.find('\n'), std::string::npos);
    ASSERT_EQ(unescape(escaped), bytes);
  }
}

TEST(Unicode, AsciiFastPathAgreesWithTheSlowPath) {
  // Every byte value at every offset of a 16-byte ASCII string.
  for (int b = 0; b < 256; ++b) {
    for (size_t at = 0; at < 16; ++at) {
      std::string text(16, 'x');
      text[at] = static_cast<char>(b);
      const bool hidden = b < 0x20 || b == 0x7F;
      const TextFault expected = b >= 0x80 ? TextFault::NotUtf8 : hidden ? TextFault::Hidden : TextFault::None;
      ASSERT_EQ(find_fault(text), expected) << b << " at " << at;
      ASSERT_EQ(valid_utf8(text), b < 0x80);
    }
  }
}

}  // namespace
}  // namespace tw::unicode
