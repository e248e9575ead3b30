// validate, set_integer and set_string: the checks command-line overrides use.
#include <gtest/gtest.h>

#include "config/config.h"

namespace tw::config {
namespace {

TEST(Validate, DefaultsAreValid) {
  auto status = validate(BrokerConfig{});
  EXPECT_TRUE(status.ok()) << status.error().message;
}

TEST(Validate, NamesTheFirstBadKey) {
  BrokerConfig config;
  config.limits.max_frame = 10;
  auto status = validate(config);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message,
            "key 'limits.max_frame': must be between 64 and 1073741824, got 10");

  config = BrokerConfig{};
  config.listen = "nowhere";
  status = validate(config);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message.rfind("key 'listen': ", 0), 0u) << status.error().message;

  config = BrokerConfig{};
  config.limits.max_output_buffer = 1ull << 63;
  status = validate(config);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message.rfind("key 'limits.max_output_buffer': ", 0), 0u);
}

TEST(SetInteger, SetsInRangeAndRefusesOutOfRange) {
  BrokerConfig config;
  ASSERT_TRUE(set_integer(config, "limits.max_output_buffer", int64_t{1} << 33).ok());
  EXPECT_EQ(config.limits.max_output_buffer, uint64_t{1} << 33);
  ASSERT_TRUE(set_integer(config, "heartbeat_ms", 10).ok());
  EXPECT_EQ(config.heartbeat_ms, 10u);

  auto status = set_integer(config, "heartbeat_ms", 9);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message, "must be between 10 and 3600000, got 9");
  EXPECT_EQ(config.heartbeat_ms, 10u) << "a refused value leaves the old one";
  EXPECT_FALSE(set_integer(config, "listen", 5).ok());
  EXPECT_FALSE(set_integer(config, "no_such_key", 5).ok());
}

TEST(SetString, SetsCheckedStrings) {
  BrokerConfig config;
  ASSERT_TRUE(set_string(config, "listen", "[::1]:0").ok());
  EXPECT_EQ(config.listen, "[::1]:0");
  ASSERT_TRUE(set_string(config, "log_level", "warn").ok());
  EXPECT_EQ(config.log_level, log::Level::Warn);

  EXPECT_FALSE(set_string(config, "listen", "[::1]").ok());
  EXPECT_EQ(config.listen, "[::1]:0");
  EXPECT_FALSE(set_string(config, "log_level", "INFO").ok());
  EXPECT_EQ(config.log_level, log::Level::Warn);
  EXPECT_FALSE(set_string(config, "heartbeat_ms", "5").ok());
}

}  // namespace
}  // namespace tw::config
