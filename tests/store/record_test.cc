#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "store/crc32c.h"
#include "store/record.h"
#include "store/store_dir.h"

namespace tw::store {
namespace {

using testing::bytes;
using testing::text;

TEST(Crc32c, TheStandardCheckValues) {
  EXPECT_EQ(crc32c(bytes("123456789")), 0xE3069283u);  // RFC 3720's check value
  EXPECT_EQ(crc32c(bytes("")), 0u);
  std::vector<uint8_t> zeros(32, 0);
  EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);  // RFC 3720 B.4: 32 bytes of zeros
  // In pieces as at once.
  EXPECT_EQ(crc32c(bytes("6789"), crc32c(bytes("12345"))), 0xE3069283u);
}

TEST(Record, RoundTrip) {
  std::vector<uint8_t> out(128);
  const std::string payload = "bid 101.25";
  const size_t size = encode_record(out, {7, 1234567890123ull, 3, "NYSE/IBM", bytes(payload)});
  EXPECT_EQ(size, record_size("NYSE/IBM", payload.size()));
  Record r;
  size_t decoded = 0;
  ASSERT_EQ(decode_record({out.data(), size}, r, decoded), Decoded::Ok);
  EXPECT_EQ(decoded, size);
  EXPECT_EQ(r.seq, 7u);
  EXPECT_EQ(r.timestamp_ns, 1234567890123ull);
  EXPECT_EQ(r.flags, 3);
  EXPECT_EQ(r.topic, "NYSE/IBM");
  EXPECT_EQ(text(r.payload), payload);
}

TEST(Record, EveryShortenedRecordIsIncompleteAndEveryFlippedBitCorrupt) {
  std::vector<uint8_t> out(128);
  const size_t size = encode_record(out, {1, 2, 0, "T/a", bytes("payload")});
  Record r;
  size_t decoded = 0;
  for (size_t cut = 0; cut < size; ++cut) {
    EXPECT_EQ(decode_record({out.data(), cut}, r, decoded), Decoded::Incomplete) << "cut at " << cut;
  }
  for (size_t bit = 0; bit < size * 8; ++bit) {
    std::vector<uint8_t> flipped(out.begin(), out.begin() + static_cast<long>(size));
    flipped[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    const Decoded d = decode_record(flipped, r, decoded);
    // A flipped size may read as longer than the bytes there are: incomplete; never Ok.
    EXPECT_NE(d, Decoded::Ok) << "bit " << bit;
  }
}

// fuzz/corpus/store_segment/three_records was written by a Python encoder of
// the layout in record.h (with its own CRC-32C): the C++ decoder must agree.
TEST(Record, TheLayoutAsDocumentedDecodesFromAnIndependentEncoder) {
  std::ifstream in(std::string(TW_SOURCE_DIR) + "/fuzz/corpus/store_segment/three_records", std::ios::binary);
  std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(file.size(), 133u);
  std::span<const uint8_t> rest(file);
  std::vector<std::string> topics;
  for (uint64_t seq = 1; seq <= 3; ++seq) {
    Record r;
    size_t size = 0;
    ASSERT_EQ(decode_record(rest, r, size), Decoded::Ok) << "record " << seq;
    EXPECT_EQ(r.seq, seq);
    EXPECT_EQ(r.timestamp_ns, 1000 * seq);
    topics.emplace_back(r.topic);
    rest = rest.subspan(size);
  }
  EXPECT_TRUE(rest.empty());
  EXPECT_EQ(topics, (std::vector<std::string>{"T/a", "NYSE/IBM", "T/b"}));
}

}  // namespace
}  // namespace tw::store
