#include "perf/probe.h"

#include <gtest/gtest.h>

#include <vector>

namespace tw::perf {
namespace {

TEST(Probe, EncodeDecodeRoundTrip) {
  ProbeHeader h{0x0102030405060708ull, 0x1112131415161718ull, 7, 42, kFlagProbe, 0};
  std::vector<uint8_t> payload(64, 0xEE);
  ASSERT_TRUE(encode_probe(h, payload));
  auto decoded = decode_probe(payload);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, h);
  EXPECT_TRUE(decoded->is_probe());
  EXPECT_EQ(payload[32], 0xEE) << "padding after the header is left alone";
}

TEST(Probe, LayoutIsLittleEndianAtDocumentedOffsets) {
  ProbeHeader h{1, 0x0A0B, 3, 4, kFlagProbe, 0};
  std::vector<uint8_t> p(32);
  ASSERT_TRUE(encode_probe(h, p));
  const std::vector<uint8_t> expected = {1, 0, 0, 0, 0, 0, 0, 0,  0x0B, 0x0A, 0, 0, 0, 0, 0, 0,
                                         3, 0, 0, 0, 4, 0, 0, 0,  1,    0,    0, 0, 0, 0, 0, 0};
  EXPECT_EQ(p, expected);
}

TEST(Probe, ShortPayloadsAreRefused) {
  std::vector<uint8_t> p(31);
  EXPECT_FALSE(encode_probe(ProbeHeader{}, p));
  EXPECT_FALSE(decode_probe(p));
}

TEST(Probe, ClockNames) {
  EXPECT_EQ(*parse_clock("monotonic"), ClockKind::Monotonic);
  EXPECT_EQ(*parse_clock("realtime"), ClockKind::Realtime);
  EXPECT_FALSE(parse_clock("tai"));
  // Realtime is epoch-based, monotonic since boot: they are far apart.
  EXPECT_GT(clock_now_ns(ClockKind::Realtime), clock_now_ns(ClockKind::Monotonic));
}

}  // namespace
}  // namespace tw::perf
