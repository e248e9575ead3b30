#include <gtest/gtest.h>

#include <cstdlib>

#include "client/options.h"

namespace tw::client {
namespace {

TEST(ServerAddress, ParsesHostAndPort) {
  std::string host;
  uint16_t port = 0;
  ASSERT_TRUE(parse_server_address("127.0.0.1:9400", host, port));
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 9400);
  ASSERT_TRUE(parse_server_address("broker.example:1", host, port));
  EXPECT_EQ(host, "broker.example");
  EXPECT_EQ(port, 1);
  ASSERT_TRUE(parse_server_address("[::1]:65535", host, port));
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 65535);
}

TEST(ServerAddress, RejectsMalformed) {
  std::string host;
  uint16_t port = 0;
  for (const char* bad : {"", "host", ":9400", "host:", "host:0", "host:65536", "host:12x", "::1:9400", "[]:1"})
    EXPECT_FALSE(parse_server_address(bad, host, port)) << bad;
}

TEST(ServerAddress, FlagBeatsEnvironmentBeatsDefault) {
  ::unsetenv("TICKWIRE_SERVER");
  EXPECT_EQ(resolve_server(""), "127.0.0.1:9400");
  ::setenv("TICKWIRE_SERVER", "10.0.0.1:7000", 1);
  EXPECT_EQ(resolve_server(""), "10.0.0.1:7000");
  EXPECT_EQ(resolve_server("h:1"), "h:1");
  ::unsetenv("TICKWIRE_SERVER");
}

}  // namespace
}  // namespace tw::client
