#include "store/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace tw::store {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78;  // reflected Castagnoli

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kTable = make_table();

uint32_t crc_by_table(std::span<const uint8_t> bytes, uint32_t c) {
  for (uint8_t b : bytes) c = kTable[(c ^ b) & 0xFF] ^ (c >> 8);
  return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t crc_by_instruction(std::span<const uint8_t> bytes, uint32_t c) {
  const uint8_t* p = bytes.data();
  size_t n = bytes.size();
  uint64_t c64 = c;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c64 = _mm_crc32_u64(c64, word);
  }
  c = static_cast<uint32_t>(c64);
  for (; n > 0; --n, ++p) c = _mm_crc32_u8(c, *p);
  return c;
}

bool has_instruction() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

}  // namespace

uint32_t crc32c(std::span<const uint8_t> bytes, uint32_t crc) {
  uint32_t c = ~crc;
#if defined(__x86_64__)
  if (has_instruction()) return ~crc_by_instruction(bytes, c);
#endif
  return ~crc_by_table(bytes, c);
}

}  // namespace tw::store
