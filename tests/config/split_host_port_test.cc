// split_host_port over a table of accepted and refused listen addresses.
#include <gtest/gtest.h>

#include "config/config.h"

namespace tw::config {
namespace {

struct Accepted {
  const char* text;
  const char* host;
  uint16_t port;
};

TEST(SplitHostPort, AcceptsHostPortForms) {
  const Accepted table[] = {
      {"127.0.0.1:9400", "127.0.0.1", 9400}, {"0.0.0.0:0", "0.0.0.0", 0},
      {"localhost:65535", "localhost", 65535}, {"[::1]:9400", "::1", 9400},
      {"[::]:1", "::", 1},                   {"host.example.com:080", "host.example.com", 80},
  };
  for (const Accepted& row : table) {
    std::string host = "unchanged";
    uint16_t port = 7;
    ASSERT_TRUE(split_host_port(row.text, host, port)) << row.text;
    EXPECT_EQ(host, row.host) << row.text;
    EXPECT_EQ(port, row.port) << row.text;
  }
}

TEST(SplitHostPort, RefusesMalformedText) {
  const char* table[] = {
      "",           "9400",           ":9400",        "127.0.0.1",     "127.0.0.1:",
      "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:94a0", "127.0.0.1:123456", "::1:9400",
      "[::1]",      "[::1]9400",      "[]:9400",      "[::1:9400",     "a b:1",
      "127.0.0.1: 9400", "127.0.0.1:+1",
  };
  for (const char* text : table) {
    std::string host = "unchanged";
    uint16_t port = 7;
    EXPECT_FALSE(split_host_port(text, host, port)) << text;
    EXPECT_EQ(host, "unchanged") << text;
    EXPECT_EQ(port, 7) << text;
  }
}

}  // namespace
}  // namespace tw::config
