// [[link]] tables (docs/configuration.md, "Broker links").
#include <gtest/gtest.h>

#include "config/config.h"

namespace tw::config {
namespace {

TEST(LinkConfig, LinksAreReadWithTheirDefaults) {
  auto c = parse_toml(R"(
[[link]]
name = "core"
upstreams = ["core-a:9400", "core-b:9400"]
user = "edge"
password_file = "/etc/tw/core.pw"
tls = true
ca = "/etc/tw/ca.pem"
reconnect_min_ms = 50
reconnect_max_ms = 1000
linger_ms = 0
local_user = "linkpub"
publish_upstream = ["FEED/>", "EXCH/A"]

[[link]]
name = "other"
upstreams = ["10.0.0.1:9400"]
)", "broker.toml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->links.size(), 2u);
  const LinkConfig& l = c->links[0];
  EXPECT_EQ(l.name, "core");
  EXPECT_EQ(l.upstreams, (std::vector<std::string>{"core-a:9400", "core-b:9400"}));
  EXPECT_EQ(l.user, "edge");
  EXPECT_EQ(l.password_file, "/etc/tw/core.pw");
  EXPECT_TRUE(l.tls);
  EXPECT_EQ(l.ca, "/etc/tw/ca.pem");
  EXPECT_EQ(l.reconnect_min_ms, 50u);
  EXPECT_EQ(l.reconnect_max_ms, 1000u);
  EXPECT_EQ(l.linger_ms, 0u);
  EXPECT_EQ(l.local_user, "linkpub");
  EXPECT_EQ(l.publish_upstream, (std::vector<std::string>{"FEED/>", "EXCH/A"}));
  const LinkConfig& d = c->links[1];
  EXPECT_FALSE(d.tls);
  EXPECT_EQ(d.user, "");
  EXPECT_EQ(d.reconnect_min_ms, 100u);
  EXPECT_EQ(d.reconnect_max_ms, 5000u);
  EXPECT_EQ(d.linger_ms, 5000u);
  EXPECT_TRUE(d.publish_upstream.empty());
}

TEST(LinkConfig, BadLinksAreRefusedWithTheirNumber) {
  auto expect_error = [](const std::string& toml, const std::string& part) {
    auto c = parse_toml(toml, "broker.toml");
    ASSERT_FALSE(c.ok()) << toml;
    EXPECT_NE(c.error().message.find(part), std::string::npos) << c.error().message;
  };
  expect_error("[[link]]\nname = \"a\"\n", "link 1: 'a' has no upstreams");
  expect_error("[[link]]\nname = \"a b\"\nupstreams = [\"h:1\"]\n", "link 1: name 'a b'");
  expect_error("[[link]]\nname = \"a\"\nupstreams = [\"h:1\"]\n[[link]]\nname = \"a\"\nupstreams = [\"h:2\"]\n",
               "link 2: name 'a' is used twice");
  expect_error("[[link]]\nname = \"a\"\nupstreams = [\"nowhere\"]\n", "upstream 'nowhere' is not HOST:PORT");
  expect_error("[[link]]\nname = \"a\"\nupstreams = [\"h:1\"]\npublish_upstream = \"FEED/>\"\n", "expected an array of patterns");
  expect_error("[[link]]\nname = \"a\"\nupstreams = [\"h:1\"]\nreconnect_min_ms = 500\nreconnect_max_ms = 100\n",
               "reconnect_min_ms <= reconnect_max_ms");
  expect_error("[[link]]\nname = \"a\"\nupstreams = [\"h:1\"]\nlinger = 5\n", "unknown key 'link.linger'");
  expect_error("[[link]]\nname = \"a\"\nupstreams = \"h:1\"\n", "expected an array of HOST:PORT strings");
}

}  // namespace
}  // namespace tw::config
