#include "mqtt/reader.h"

namespace tw::mqtt {

bool valid_utf8(std::span<const uint8_t> s) {
  size_t i = 0;
  while (i < s.size()) {
    const uint8_t b = s[i];
    if (b == 0) return false;
    if (b < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0, min = 0;
    if ((b & 0xE0) == 0xC0) len = 2, cp = b & 0x1F, min = 0x80;
    else if ((b & 0xF0) == 0xE0) len = 3, cp = b & 0x0F, min = 0x800;
    else if ((b & 0xF8) == 0xF0) len = 4, cp = b & 0x07, min = 0x10000;
    else return false;
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    // Overlong forms, UTF-16 surrogates and code points past Unicode are not UTF-8.
    if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return false;
    i += len;
  }
  return true;
}

int read_varint(std::span<const uint8_t> in, uint32_t& value) {
  value = 0;
  for (size_t i = 0; i < 4; ++i) {
    if (i >= in.size()) return 0;
    const uint8_t b = in[i];
    value |= uint32_t{b & 0x7Fu} << (7 * i);
    if ((b & 0x80) == 0) return (i > 0 && b == 0) ? -1 : static_cast<int>(i + 1);
  }
  return -1;
}

bool Reader::need(size_t n) {
  if (failed()) return false;
  if (in_.size() - pos_ >= n) return true;
  fail(Reason::MalformedPacket, "packet shorter than its fields");
  return false;
}

uint8_t Reader::u8() { return need(1) ? in_[pos_++] : 0; }

uint16_t Reader::u16() {
  if (!need(2)) return 0;
  uint16_t v = static_cast<uint16_t>((in_[pos_] << 8) | in_[pos_ + 1]);
  pos_ += 2;
  return v;
}

uint32_t Reader::u32() {
  if (!need(4)) return 0;
  uint32_t v = (uint32_t{in_[pos_]} << 24) | (uint32_t{in_[pos_ + 1]} << 16) | (uint32_t{in_[pos_ + 2]} << 8) |
               in_[pos_ + 3];
  pos_ += 4;
  return v;
}

uint32_t Reader::varint() {
  if (failed()) return 0;
  uint32_t v = 0;
  int n = read_varint(in_.subspan(pos_), v);
  if (n <= 0) {
    fail(Reason::MalformedPacket, "malformed variable byte integer");
    return 0;
  }
  pos_ += static_cast<size_t>(n);
  return v;
}

std::span<const uint8_t> Reader::take(size_t n) {
  if (!need(n)) return {};
  auto out = in_.subspan(pos_, n);
  pos_ += n;
  return out;
}

std::span<const uint8_t> Reader::binary() { return take(u16()); }

std::string_view Reader::utf8() {
  auto bytes = binary();
  if (failed()) return {};
  if (!valid_utf8(bytes)) {
    fail(Reason::MalformedPacket, "string is not valid UTF-8 (or holds U+0000)");
    return {};
  }
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace tw::mqtt
