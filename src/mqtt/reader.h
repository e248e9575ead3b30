// Reads MQTT's data representations (section 1.5): big-endian integers,
// Variable Byte Integers, length-prefixed UTF-8 strings and binary data.
// The first error is kept (its reason and text) and every later read yields
// zeros, so a decoder checks once at the end.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

#include "mqtt/packet.h"

namespace tw::mqtt {

// RFC 3629 UTF-8 without U+0000 ([MQTT-1.5.4-1], [MQTT-1.5.4-2]).
bool valid_utf8(std::span<const uint8_t> bytes);
// A Variable Byte Integer at the front of `in`: its value and length in
// bytes; 0 = more bytes needed, -1 = malformed (over 4 bytes, or not the
// shortest form, [MQTT-1.5.5-1]).
int read_varint(std::span<const uint8_t> in, uint32_t& value);

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> in) : in_(in) {}

  uint8_t u8();
  uint16_t u16();
  uint32_t u32();
  uint32_t varint();
  std::span<const uint8_t> binary();
  std::string_view utf8();
  std::span<const uint8_t> take(size_t n);
  std::span<const uint8_t> rest() { return take(remaining()); }

  size_t remaining() const { return failed() ? 0 : in_.size() - pos_; }
  bool empty() const { return remaining() == 0; }
  bool failed() const { return reason_ != Reason::Success; }
  Reason reason() const { return reason_; }
  const char* text() const { return text_; }
  // Records the first error only.
  void fail(Reason reason, const char* text) {
    if (failed()) return;
    reason_ = reason;
    text_ = text;
  }

 private:
  bool need(size_t n);

  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  Reason reason_ = Reason::Success;
  const char* text_ = "";
};

}  // namespace tw::mqtt
