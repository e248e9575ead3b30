#include "mqtt/reader.h"

#include "wire/utf8.h"

namespace tw::mqtt {

// MQTT strings are UTF-8 without U+0000 [MQTT-1.5.4-2]; the rest is the broker's one check.
bool valid_utf8(std::span<const uint8_t> s) {
  std::string_view text(reinterpret_cast<const char*>(s.data()), s.size());
  return text.find('\0') == std::string_view::npos && wire::valid_utf8(text);
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
