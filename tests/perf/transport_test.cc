#include "perf/transport.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace tw::perf {
namespace {

TEST(Transport, NamesAndDefaultPorts) {
  EXPECT_EQ(*parse_transport("native"), TransportKind::Native);
  EXPECT_EQ(*parse_transport("mqtt"), TransportKind::Mqtt);
  EXPECT_EQ(*parse_transport("nats"), TransportKind::Nats);
  EXPECT_EQ(*parse_transport("mqtt-raw"), TransportKind::MqttRaw);
  EXPECT_EQ(*parse_transport("nats-raw"), TransportKind::NatsRaw);
  EXPECT_FALSE(parse_transport("kafka"));
  EXPECT_EQ(default_port(TransportKind::Native), 9400);
  EXPECT_EQ(default_port(TransportKind::Mqtt), 1883);
  EXPECT_EQ(default_port(TransportKind::Nats), 4222);
  EXPECT_EQ(default_port(TransportKind::MqttRaw), 1883);
  EXPECT_EQ(default_port(TransportKind::NatsRaw), 4222);
}

TEST(Transport, MqttMapsWholeLevelWildcards) {
  EXPECT_EQ(map_pattern(TransportKind::Mqtt, "PERF/>"), "PERF/#");
  EXPECT_EQ(map_pattern(TransportKind::Mqtt, "*/EQ/>"), "+/EQ/#");
  EXPECT_EQ(map_pattern(TransportKind::Mqtt, ">"), "#");
  EXPECT_EQ(map_pattern(TransportKind::Mqtt, "PERF/1"), "PERF/1");
  EXPECT_EQ(map_topic(TransportKind::Mqtt, "PERF/1"), "PERF/1");
}

TEST(Transport, NatsUsesDotsAndKeepsWildcards) {
  EXPECT_EQ(map_topic(TransportKind::Nats, "PERF/12"), "PERF.12");
  EXPECT_EQ(map_pattern(TransportKind::Nats, "PERF/>"), "PERF.>");
  EXPECT_EQ(map_pattern(TransportKind::Nats, "*/EQ/>"), "*.EQ.>");
  EXPECT_EQ(map_pattern(TransportKind::NatsRaw, "*/EQ/>"), "*.EQ.>");
  EXPECT_EQ(map_pattern(TransportKind::MqttRaw, "*/EQ/>"), "+/EQ/#");
}

TEST(Transport, NativeKeepsEverything) {
  EXPECT_EQ(map_pattern(TransportKind::Native, "PERF/*/x"), "PERF/*/x");
}

TEST(Transport, ServerFlagThenEnvironmentThenTransportDefault) {
  unsetenv("TICKWIRE_SERVER");
  auto d = resolve_server(TransportKind::Mqtt, "");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->host, "127.0.0.1");
  EXPECT_EQ(d->port, 1883);
  EXPECT_EQ(resolve_server(TransportKind::Nats, "")->port, 4222);
  setenv("TICKWIRE_SERVER", "10.0.0.1:5000", 1);
  EXPECT_EQ(resolve_server(TransportKind::Nats, "")->port, 5000);
  EXPECT_EQ(resolve_server(TransportKind::Nats, "h:7")->host, "h");
  unsetenv("TICKWIRE_SERVER");
  EXPECT_FALSE(resolve_server(TransportKind::Native, "nonsense"));
}

}  // namespace
}  // namespace tw::perf
