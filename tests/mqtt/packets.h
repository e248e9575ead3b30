// MQTT packets assembled by hand for the tests, byte by byte as the
// specification lays them out, independent of the encoders under test.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

namespace tw::mqtt::testing {

using Bytes = std::vector<uint8_t>;

// A UTF-8 string or binary data: a two-byte length, then the bytes.
inline Bytes str(std::string_view s) {
  // Byte by byte: GCC 12 -O3 warns falsely (array-bounds) on insert() after a brace-initialised prefix.
  Bytes b;
  b.reserve(2 + s.size());
  b.push_back(static_cast<uint8_t>(s.size() >> 8));
  b.push_back(static_cast<uint8_t>(s.size()));
  for (char c : s) b.push_back(static_cast<uint8_t>(c));
  return b;
}
inline Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
// A whole packet: the first byte, the remaining length, the body.
inline Bytes packet(uint8_t first, const Bytes& body) {
  Bytes out = {first};
  uint32_t n = static_cast<uint32_t>(body.size());
  do {
    uint8_t b = n & 0x7F;
    n >>= 7;
    out.push_back(n ? b | 0x80 : b);
  } while (n);
  return cat({out, body});
}
// MQTT 5 CONNECT with these flags (Clean Start by default), keep alive 30 s,
// these properties (their length included).
inline Bytes connect_v5(const Bytes& props, std::string_view client_id, uint8_t flags = 0x02) {
  return packet(0x10, cat({str("MQTT"), {5, flags, 0, 30}, props, str(client_id)}));
}

}  // namespace tw::mqtt::testing
