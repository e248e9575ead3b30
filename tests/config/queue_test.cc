// [store] and [[queue]] tables (docs/configuration.md, "Guaranteed messaging").
#include <gtest/gtest.h>

#include "config/config.h"

namespace tw::config {
namespace {

TEST(QueueConfig, StoreAndQueuesAreRead) {
  auto c = parse_toml(R"(
[store]
dir = "/var/lib/tw"
segment_bytes = 1048576
publish_window = 64

[[queue]]
name = "orders"
subscriptions = ["ORD/>", "FILL/*/X"]
max_messages = 10
exclusive = true

[[queue]]
name = "audit"
subscriptions = [">"]
)", "broker.toml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->store.dir, "/var/lib/tw");
  EXPECT_EQ(c->store.segment_bytes, 1048576u);
  EXPECT_EQ(c->store.publish_window, 64u);
  ASSERT_EQ(c->queues.size(), 2u);
  EXPECT_EQ(c->queues[0].name, "orders");
  EXPECT_EQ(c->queues[0].subscriptions, (std::vector<std::string>{"ORD/>", "FILL/*/X"}));
  EXPECT_EQ(c->queues[0].max_messages, 10u);
  EXPECT_TRUE(c->queues[0].exclusive);
  EXPECT_EQ(c->queues[1].max_bytes, 1ull << 30);  // the default
  EXPECT_FALSE(c->queues[1].exclusive);
}

TEST(QueueConfig, NoStoreDirMeansGuaranteedMessagingOff) {
  auto c = parse_toml("", "broker.toml");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->store.dir, "");
  EXPECT_TRUE(c->queues.empty());
}

TEST(QueueConfig, BadQueuesAreRefusedWithTheirNumber) {
  auto expect_error = [](const std::string& toml, const std::string& part) {
    auto c = parse_toml(toml, "broker.toml");
    ASSERT_FALSE(c.ok()) << toml;
    EXPECT_NE(c.error().message.find(part), std::string::npos) << c.error().message;
  };
  const std::string store = "[store]\ndir = \"/tmp/x\"\n";
  expect_error(store + "[[queue]]\nname = \"../up\"\nsubscriptions = [\"A\"]\n", "queue 1: name '../up'");
  expect_error(store + "[[queue]]\nname = \"a\"\n", "has no subscriptions");
  expect_error(store + "[[queue]]\nname = \"a\"\nsubscriptions = [\"A\"]\n[[queue]]\nname = \"a\"\nsubscriptions = [\"B\"]\n",
               "queue 2: name 'a' is used twice");
  expect_error("[[queue]]\nname = \"a\"\nsubscriptions = [\"A\"]\n", "needs store.dir");
  expect_error(store + "[[queue]]\nname = \"a\"\nsubscriptions = [\"A\"]\nmax_messages = 0\n", "expected an integer > 0");
  expect_error(store + "[[queue]]\nname = \"a\"\nsubscriptions = [\"A\"]\ncolour = \"red\"\n", "unknown key 'queue.colour'");
}

}  // namespace
}  // namespace tw::config
