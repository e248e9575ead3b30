#include <gtest/gtest.h>

#include <cstdlib>

#include "tickwire/client/options.h"

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

TEST(ServerAddress, AListGivesTheFirstAndTheFailoverServers) {
  Options options;
  ASSERT_TRUE(parse_server_list("10.0.0.1:9400,[::1]:9401,b.example:9", options));
  EXPECT_EQ(options.host, "10.0.0.1");
  EXPECT_EQ(options.port, 9400);
  EXPECT_EQ(options.failover, (std::vector<std::string>{"[::1]:9401", "b.example:9"}));
  ASSERT_TRUE(parse_server_list("10.0.0.2:1", options));
  EXPECT_TRUE(options.failover.empty());
  auto bad = parse_server_list("10.0.0.1:9400,,b:1", options);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("''"), std::string::npos) << bad.error().message;
  EXPECT_FALSE(parse_server_list("10.0.0.1:9400,b", options));
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
