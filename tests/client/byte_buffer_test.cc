#include <gtest/gtest.h>

#include "tickwire/client/io_buffer.h"

namespace tw::client {
namespace {

TEST(ByteBuffer, CommitConsumeAndCompact) {
  ByteBuffer b(8);
  ASSERT_TRUE(b.reserve(6, 8));
  std::memcpy(b.writable().data(), "abcdef", 6);
  b.commit(6);
  b.consume(4);
  EXPECT_EQ(b.size(), 2u);
  ASSERT_TRUE(b.reserve(6, 8)) << "compaction makes room without growing";
  EXPECT_EQ(b.capacity(), 8u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(b.readable().data()), 2), "ef");
}

TEST(ByteBuffer, GrowsUpToTheLimitAndNoFurther) {
  ByteBuffer b(4);
  b.commit(4);
  ASSERT_TRUE(b.reserve(10, 32));
  EXPECT_GE(b.capacity(), 14u);
  EXPECT_LE(b.capacity(), 32u);
  EXPECT_EQ(b.size(), 4u);
  EXPECT_FALSE(b.reserve(100, 32));
}

TEST(ByteBuffer, FullConsumeResetsToFront) {
  ByteBuffer b(4);
  b.commit(3);
  b.consume(3);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.writable().size(), 4u);
}

}  // namespace
}  // namespace tw::client
