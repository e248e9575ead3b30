// parse_toml: the full example, defaults, and every class of error naming
// the file, line and key.
#include <gtest/gtest.h>

#include "config/config.h"

namespace tw::config {
namespace {

constexpr const char* kFullExample = R"(listen = "0.0.0.0:9500"
server_name = "edge-1"
heartbeat_ms = 2000
idle_timeout_ms = 6000
hello_timeout_ms = 1000
frame_deadline_ms = 3000
shutdown_grace_ms = 250
log_level = "debug"
[limits]
max_frame = 65536
max_subscriptions = 50
max_registrations = 60
max_connections = 70
max_channels = 80
max_output_buffer = 1048576
max_partial_input = 2097152
max_topic_length = 128
max_topic_depth = 8
)";

std::string error_of(std::string_view text) {
  auto result = parse_toml(text, "broker.toml");
  EXPECT_FALSE(result.ok()) << "accepted: " << text;
  return result.ok() ? std::string() : result.error().message;
}

TEST(ParseToml, ReadsEveryKeyOfTheFullExample) {
  auto result = parse_toml(kFullExample, "broker.toml");
  ASSERT_TRUE(result.ok()) << result.error().message;
  const BrokerConfig& c = result.value();
  EXPECT_EQ(c.listen, "0.0.0.0:9500");
  EXPECT_EQ(c.server_name, "edge-1");
  EXPECT_EQ(c.heartbeat_ms, 2000u);
  EXPECT_EQ(c.idle_timeout_ms, 6000u);
  EXPECT_EQ(c.hello_timeout_ms, 1000u);
  EXPECT_EQ(c.frame_deadline_ms, 3000u);
  EXPECT_EQ(c.shutdown_grace_ms, 250u);
  EXPECT_EQ(c.log_level, log::Level::Debug);
  EXPECT_EQ(c.limits.max_frame, 65536u);
  EXPECT_EQ(c.limits.max_subscriptions, 50u);
  EXPECT_EQ(c.limits.max_registrations, 60u);
  EXPECT_EQ(c.limits.max_connections, 70u);
  EXPECT_EQ(c.limits.max_channels, 80u);
  EXPECT_EQ(c.limits.max_output_buffer, 1048576u);
  EXPECT_EQ(c.limits.max_partial_input, 2097152u);
  EXPECT_EQ(c.limits.max_topic_length, 128u);
  EXPECT_EQ(c.limits.max_topic_depth, 8u);
}

TEST(ParseToml, EmptyTextGivesTheEmbeddedDefaults) {
  auto result = parse_toml("", "broker.toml");
  ASSERT_TRUE(result.ok()) << result.error().message;
  const BrokerConfig& c = result.value();
  EXPECT_EQ(c.listen, "127.0.0.1:9400");
  EXPECT_EQ(c.server_name, "tickwired");
  EXPECT_EQ(c.heartbeat_ms, 5000u);
  EXPECT_EQ(c.idle_timeout_ms, 15000u);
  EXPECT_EQ(c.hello_timeout_ms, 5000u);
  EXPECT_EQ(c.frame_deadline_ms, 10000u);
  EXPECT_EQ(c.shutdown_grace_ms, 500u);
  EXPECT_EQ(c.log_level, log::Level::Info);
  EXPECT_EQ(c.limits.max_frame, 1048576u);
  EXPECT_EQ(c.limits.max_subscriptions, 10000u);
  EXPECT_EQ(c.limits.max_registrations, 100000u);
  EXPECT_EQ(c.limits.max_connections, 100000u);
  EXPECT_EQ(c.limits.max_channels, 1000000u);
  EXPECT_EQ(c.limits.max_output_buffer, 67108864u);
  EXPECT_EQ(c.limits.max_partial_input, 268435456u);
  EXPECT_EQ(c.limits.max_topic_length, 256u);
  EXPECT_EQ(c.limits.max_topic_depth, 16u);
}

TEST(ParseToml, KeysNotGivenKeepTheirDefaults) {
  auto result = parse_toml("heartbeat_ms = 1234\n[limits]\nmax_frame = 4096\n", "b.toml");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->heartbeat_ms, 1234u);
  EXPECT_EQ(result->limits.max_frame, 4096u);
  EXPECT_EQ(result->idle_timeout_ms, 15000u);
  EXPECT_EQ(result->limits.max_connections, 100000u);
}

TEST(ParseToml, DottedLimitsKeysAreAccepted) {
  auto result = parse_toml("limits.max_connections = 3\n", "b.toml");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->limits.max_connections, 3u);
}

TEST(ParseToml, WrongTypeNamesFileLineAndKey) {
  EXPECT_EQ(error_of("listen = \"127.0.0.1:1\"\n\nheartbeat_ms = \"fast\"\n"),
            "broker.toml:3: key 'heartbeat_ms': expected an integer");
  EXPECT_EQ(error_of("server_name = 7\n"), "broker.toml:1: key 'server_name': expected a string");
  EXPECT_EQ(error_of("[limits]\nmax_frame = 1.5\n"),
            "broker.toml:2: key 'limits.max_frame': expected an integer");
  EXPECT_EQ(error_of("limits = 3\n"), "broker.toml:1: key 'limits': expected a table");
}

TEST(ParseToml, UnknownKeyIsAnErrorNamingLineAndKey) {
  EXPECT_EQ(error_of("listen = \"127.0.0.1:1\"\n[limits]\nmax_fram = 100\n"),
            "broker.toml:3: unknown key 'limits.max_fram'");
  EXPECT_EQ(error_of("\nheartbeat = 5\n"), "broker.toml:2: unknown key 'heartbeat'");
  EXPECT_EQ(error_of("[limit]\nmax_frame = 100\n"), "broker.toml:1: unknown key 'limit'");
  EXPECT_EQ(error_of("[limits.deep]\nx = 1\n"), "broker.toml:1: unknown key 'limits.deep'");
}

TEST(ParseToml, SyntaxErrorGivesLineColumnAndDescription) {
  std::string error = error_of("listen = \"127.0.0.1:1\"\nheartbeat_ms = = 5\n");
  EXPECT_EQ(error.rfind("broker.toml:2:", 0), 0u) << error;
  // line:column: description; the description is toml++'s own text.
  EXPECT_NE(error.find(": ", std::string("broker.toml:2:").size()), std::string::npos) << error;
  EXPECT_GT(error.size(), std::string("broker.toml:2:15: ").size()) << error;
}

TEST(ParseToml, DuplicateKeyIsASyntaxError) {
  std::string error = error_of("heartbeat_ms = 1000\nheartbeat_ms = 2000\n");
  EXPECT_EQ(error.rfind("broker.toml:2:", 0), 0u) << error;
}

TEST(ParseToml, OutOfRangeValuesNameTheKey) {
  EXPECT_EQ(error_of("[limits]\nmax_frame = 63\n"),
            "broker.toml:2: key 'limits.max_frame': must be between 64 and 1073741824, got 63");
  EXPECT_EQ(error_of("heartbeat_ms = -5\n"),
            "broker.toml:1: key 'heartbeat_ms': must be between 10 and 3600000, got -5");
  EXPECT_EQ(error_of("[limits]\nmax_connections = 0\n"),
            "broker.toml:2: key 'limits.max_connections': must be between 1 and 4294967295, got 0");
  EXPECT_EQ(error_of("[limits]\nmax_subscriptions = 4294967296\n"),
            "broker.toml:2: key 'limits.max_subscriptions': must be between 1 and 4294967295, "
            "got 4294967296");
}

TEST(ParseToml, BadStringValuesNameTheKey) {
  EXPECT_EQ(error_of("listen = \"localhost\"\n"),
            "broker.toml:1: key 'listen': expected HOST:PORT or [IPV6]:PORT with port 0..65535, "
            "got 'localhost'");
  EXPECT_EQ(error_of("listen = \"127.0.0.1:70000\"\n").rfind("broker.toml:1: key 'listen': ", 0),
            0u);
  EXPECT_EQ(error_of("log_level = \"loud\"\n"),
            "broker.toml:1: key 'log_level': expected one of debug, info, warn, error, off, got "
            "'loud'");
  EXPECT_EQ(error_of("server_name = \"\"\n"),
            "broker.toml:1: key 'server_name': must be 1..255 bytes long");
}

TEST(ParseToml, ZeroGraceAndPortZeroAreMeaningful) {
  auto result = parse_toml("listen = \"127.0.0.1:0\"\nshutdown_grace_ms = 0\n", "b.toml");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->listen, "127.0.0.1:0");
  EXPECT_EQ(result->shutdown_grace_ms, 0u);
}

TEST(ParseToml, ErrorsUseTheGivenSourceName) {
  auto result = parse_toml("nope = 1\n", "/etc/tickwire/broker.toml");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, "/etc/tickwire/broker.toml:1: unknown key 'nope'");
}

}  // namespace
}  // namespace tw::config

namespace tw::config {
namespace {

TEST(ParseToml, SlowConsumerPolicyDefaultsToConflateAndTakesTheThreePolicies) {
  EXPECT_EQ(BrokerConfig{}.slow_consumer_policy, "conflate");
  for (const char* policy : {"conflate", "drop", "disconnect"}) {
    auto result = parse_toml(std::string("slow_consumer_policy = \"") + policy + "\"\n", "broker.toml");
    ASSERT_TRUE(result.ok()) << result.error().message;
    EXPECT_EQ(result.value().slow_consumer_policy, policy);
  }
  auto bad = parse_toml("slow_consumer_policy = \"block\"\n", "broker.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("slow_consumer_policy"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("expected conflate, drop or disconnect"), std::string::npos);
  BrokerConfig patched;
  patched.slow_consumer_policy = "never";
  EXPECT_FALSE(validate(patched).ok());
}

}  // namespace
}  // namespace tw::config

namespace tw::config {
namespace {

TEST(ParseTomlAuth, UsersKeysAreRead) {
  auto result = parse_toml("auth_file = \"/etc/tickwire/users.toml\"\nallow_anonymous = true\n"
                           "auth_failure_delay_ms = 250\nauth_verifier_threads = 3\nauth_max_pending_per_source = 8\n",
                           "broker.toml");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->auth_file, "/etc/tickwire/users.toml");
  EXPECT_TRUE(result->allow_anonymous);
  EXPECT_EQ(result->auth_failure_delay_ms, 250u);
  EXPECT_EQ(result->auth_verifier_threads, 3u);
  EXPECT_EQ(result->auth_max_pending_per_source, 8u);
  auto defaults = parse_toml("", "broker.toml");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->auth_file, "");
  EXPECT_FALSE(defaults->allow_anonymous);
  EXPECT_EQ(defaults->auth_failure_delay_ms, 1000u);
  EXPECT_EQ(defaults->auth_verifier_threads, 2u);
  EXPECT_EQ(defaults->auth_max_pending_per_source, 4u);
}

TEST(ParseTomlAuth, AllowAnonymousMustBeABoolean) {
  auto result = parse_toml("allow_anonymous = 1\n", "broker.toml");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, "broker.toml:1: key 'allow_anonymous': expected true or false");
}

}  // namespace
}  // namespace tw::config

namespace tw::config {
namespace {

TEST(ParseToml, DelayHistoryTablesAreRead) {
  auto config = parse_toml("[[delay_history]]\ntopics = [\"NYSE/>\", \"NASDAQ/>\"]\ndelay_s = 900\n"
                           "[[delay_history]]\ntopics = [\"LSE/>\"]\ndelay_s = 1200\n",
                           "broker.toml");
  ASSERT_TRUE(config.ok()) << config.error().message;
  ASSERT_EQ(config->delay_history.size(), 2u);
  EXPECT_EQ(config->delay_history[0].topics, (std::vector<std::string>{"NYSE/>", "NASDAQ/>"}));
  EXPECT_EQ(config->delay_history[0].delay_ms, 900'000u);
  EXPECT_EQ(config->delay_history[1].delay_ms, 1'200'000u);
  EXPECT_TRUE(parse_toml("", "broker.toml")->delay_history.empty());
}

TEST(ParseToml, BadDelayHistoryNamesTheKey) {
  EXPECT_EQ(error_of("delay_history = 3\n"), "broker.toml:1: key 'delay_history': expected [[delay_history]] tables");
  EXPECT_EQ(error_of("[[delay_history]]\ntopics = [\"A/>\"]\ndelay_s = 0\n"),
            "broker.toml:3: key 'delay_history.delay_s': expected an integer, 1..604800 (a week)");
  EXPECT_EQ(error_of("[[delay_history]]\ntopics = \"A/>\"\ndelay_s = 5\n"),
            "broker.toml:2: key 'delay_history.topics': expected an array of strings");
  EXPECT_EQ(error_of("[[delay_history]]\ndelay_s = 5\n"),
            "broker.toml:1: key 'delay_history': each table needs topics and delay_s");
  EXPECT_EQ(error_of("[[delay_history]]\ntopics = [\"A/>\"]\ndelay_s = 5\nspeed = 1\n"),
            "broker.toml:4: unknown key 'delay_history.speed'");
  EXPECT_EQ(error_of("[[delay_history]]\ntopics = [\"A/>/B\"]\ndelay_s = 5\n"),
            "broker.toml: key 'delay_history.topics': not a valid topic pattern: 'A/>/B'");
}

}  // namespace
}  // namespace tw::config
