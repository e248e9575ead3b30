// [[listener]] tables: reading them, their errors with file and line, and
// `listen` (with `mqtt_listen`) as the shorthand for the default listeners.
#include <gtest/gtest.h>

#include "config/config.h"

namespace tw::config {
namespace {

std::string error_of(std::string_view text) {
  auto result = parse_toml(text, "broker.toml");
  EXPECT_FALSE(result.ok()) << "accepted: " << text;
  return result.ok() ? std::string() : result.error().message;
}

TEST(Listeners, WithoutTablesListenIsTheNativeListenerAndMqttListenTheOptionalMqttOne) {
  BrokerConfig defaults;
  ASSERT_TRUE(set_string(defaults, "http_listen", ""));
  auto listeners = effective_listeners(defaults);
  ASSERT_EQ(listeners.size(), 2u);
  EXPECT_EQ(listeners[0].protocol, "native");
  EXPECT_EQ(listeners[0].address, "127.0.0.1:9400");
  EXPECT_FALSE(listeners[0].tls());
  EXPECT_FALSE(listeners[0].optional);
  EXPECT_EQ(listeners[0].describe(9400), "native tcp://127.0.0.1:9400");
  EXPECT_EQ(listeners[1].describe(1883), "mqtt tcp://127.0.0.1:1883");
  EXPECT_TRUE(listeners[1].optional);  // a port taken by a local mosquitto is skipped, not fatal

  ASSERT_TRUE(set_string(defaults, "mqtt_listen", "127.0.0.1:1884"));
  EXPECT_FALSE(effective_listeners(defaults)[1].optional);  // asked for: a failed bind is an error
  ASSERT_TRUE(set_string(defaults, "mqtt_listen", ""));
  EXPECT_EQ(effective_listeners(defaults).size(), 1u);
  EXPECT_FALSE(set_string(defaults, "mqtt_listen", "nowhere"));
}

TEST(Listeners, HttpListenIsTheOptionalHttpListenerLikeMqttListen) {
  BrokerConfig defaults;
  auto listeners = effective_listeners(defaults);
  ASSERT_EQ(listeners.size(), 3u);
  EXPECT_EQ(listeners[2].describe(9401), "http tcp://127.0.0.1:9401");
  EXPECT_TRUE(listeners[2].optional);  // a taken port is logged and skipped
  ASSERT_TRUE(set_string(defaults, "http_listen", "127.0.0.1:9402"));
  EXPECT_FALSE(effective_listeners(defaults)[2].optional);  // asked for: a failed bind is an error
  ASSERT_TRUE(set_string(defaults, "http_listen", ""));
  EXPECT_EQ(effective_listeners(defaults).size(), 2u);
  EXPECT_FALSE(set_string(defaults, "http_listen", "nowhere"));
}

TEST(Listeners, AnHttpTableIsAccepted) {
  auto result = parse_toml("[[listener]]\nprotocol = \"http\"\naddress = \"127.0.0.1:0\"\n", "broker.toml");
  ASSERT_TRUE(result.ok()) << result.error().message;
  auto listeners = effective_listeners(*result);
  ASSERT_EQ(listeners.size(), 1u);
  EXPECT_EQ(listeners[0].protocol, "http");
  EXPECT_FALSE(listeners[0].optional);
}

TEST(Listeners, AnMqttTableIsNeverOptional) {
  auto result = parse_toml("[[listener]]\nprotocol = \"mqtt\"\naddress = \"127.0.0.1:1883\"\n", "broker.toml");
  ASSERT_TRUE(result.ok()) << result.error().message;
  auto listeners = effective_listeners(*result);
  ASSERT_EQ(listeners.size(), 1u);
  EXPECT_EQ(listeners[0].protocol, "mqtt");
  EXPECT_FALSE(listeners[0].optional);
}

TEST(Listeners, ReadsEveryTableInOrder) {
  auto result = parse_toml(R"(heartbeat_ms = 1000
[[listener]]
address = "127.0.0.1:9400"

[[listener]]
protocol = "native"
address = "[::1]:9443"
cert = "/etc/tickwire/broker.pem"
key = "/etc/tickwire/broker.key"
client_ca = "/etc/tickwire/clients-ca.pem"
)",
                           "broker.toml");
  ASSERT_TRUE(result.ok()) << result.error().message;
  auto listeners = effective_listeners(*result);
  ASSERT_EQ(listeners.size(), 2u);
  EXPECT_FALSE(listeners[0].tls());
  EXPECT_EQ(listeners[1].address, "[::1]:9443");
  EXPECT_EQ(listeners[1].key, "/etc/tickwire/broker.key");
  EXPECT_EQ(listeners[1].client_ca, "/etc/tickwire/clients-ca.pem");
  EXPECT_EQ(listeners[1].describe(9443), "native tls://[::1]:9443");
}

TEST(Listeners, ErrorsNameFileLineAndKey) {
  EXPECT_EQ(error_of("[[listener]]\naddress = \"127.0.0.1:1\"\nport = 3\n"),
            "broker.toml:3: unknown key 'listener.port'");
  EXPECT_EQ(error_of("[[listener]]\naddress = 9400\n"), "broker.toml:2: key 'listener.address': expected a string");
  EXPECT_EQ(error_of("[[listener]]\nprotocol = \"ws\"\naddress = \"127.0.0.1:1\"\n"),
            "broker.toml:2: key 'listener.protocol': expected one of native, mqtt, http, got 'ws'");
  EXPECT_EQ(error_of("[[listener]]\naddress = \"nowhere\"\n"),
            "broker.toml:2: key 'listener.address': expected HOST:PORT or [IPV6]:PORT with port 0..65535, got "
            "'nowhere'");
  EXPECT_EQ(error_of("listener = 3\n"), "broker.toml:1: key 'listener': expected [[listener]] tables");
}

TEST(Listeners, KeysThatGoTogetherAreCheckedPerTable) {
  EXPECT_EQ(error_of("[[listener]]\naddress = \"127.0.0.1:1\"\n\n[[listener]]\ncert = \"a.pem\"\naddress = "
                     "\"127.0.0.1:2\"\n"),
            "broker.toml:4: listener 2: cert and key: TLS needs both");
  EXPECT_EQ(error_of("[[listener]]\nprotocol = \"native\"\n"), "broker.toml:1: listener 1: address is required (HOST:PORT)");
  EXPECT_EQ(error_of("[[listener]]\naddress = \"127.0.0.1:1\"\nclient_ca = \"ca.pem\"\n"),
            "broker.toml:1: listener 1: client_ca: needs cert and key (TLS)");
  EXPECT_EQ(error_of("listen = \"127.0.0.1:1\"\n[[listener]]\naddress = \"127.0.0.1:2\"\n"),
            "broker.toml:1: key 'listen': not with [[listener]] (give each listener its address)");
}

// --listen stays the shorthand: with listeners it moves the first one (the
// one the port file reports), so scripts and tests that pass it keep working.
TEST(Listeners, ListenFlagMovesTheFirstListener) {
  auto result = parse_toml("[[listener]]\naddress = \"127.0.0.1:9443\"\ncert = \"c\"\nkey = \"k\"\n", "broker.toml");
  ASSERT_TRUE(result.ok()) << result.error().message;
  ASSERT_TRUE(set_string(*result, "listen", "127.0.0.1:0").ok());
  EXPECT_EQ(effective_listeners(*result)[0].address, "127.0.0.1:0");
  EXPECT_TRUE(effective_listeners(*result)[0].tls());
}

TEST(Listeners, ValidateChecksListenersBuiltInCode) {
  BrokerConfig config;
  Listener half;
  half.address = "127.0.0.1:1";
  half.key = "k.pem";
  config.listeners.push_back(half);
  auto status = validate(config);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message, "listener 1: cert and key: TLS needs both");
}

}  // namespace
}  // namespace tw::config
