#include "auth/entitlements.h"

#include <gtest/gtest.h>

#include "auth/policy.h"

namespace tw::auth {
namespace {

std::shared_ptr<const Policy> parse(const std::string& text) {
  auto p = Policy::parse(text, "users.toml");
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  return p.ok() ? *p : nullptr;
}

constexpr const char* kFile = R"(
[users.alice]
groups = ["eq"]
[[users.alice.rule]]
allow = ["subscribe-delayed"]
delay_s = 900
topics = ["LSE/>"]
[[users.alice.rule]]
deny = ["subscribe"]
topics = ["EQ/SECRET"]

[users.feed]
[[users.feed.rule]]
allow = ["publish"]
topics = [">"]
[[users.feed.rule]]
allow = ["provide"]
topics = ["SVC/>"]

[groups.eq]
[[groups.eq.rule]]
allow = ["subscribe", "publish"]
topics = ["EQ/>"]

[anonymous]
[[anonymous.rule]]
allow = ["subscribe"]
topics = ["PUBLIC/>"]
)";

TEST(Grants, DenyWinsAndGroupsAdd) {
  auto policy = parse(kFile);
  ASSERT_TRUE(policy);
  const Grants& alice = *policy->find_user("alice")->grants;
  EXPECT_TRUE(alice.receives("EQ/IBM", 0));
  EXPECT_FALSE(alice.receives("EQ/SECRET", 0));
  EXPECT_FALSE(alice.receives("EQ/SECRET", 900'000));
  EXPECT_FALSE(alice.receives("FX/EUR", 0));
  EXPECT_EQ(alice.subscribe("EQ/SECRET", 0).code, wire::Code::NotAuthorized);
  EXPECT_EQ(alice.subscribe("FX/>", 0).code, wire::Code::NotAuthorized);
  EXPECT_TRUE(alice.subscribe(">", 0).ok());  // overlaps EQ/>: filtered per channel
  EXPECT_EQ(alice.publish("EQ/IBM"), wire::Code::Ok);
  EXPECT_EQ(alice.publish("FX/EUR"), wire::Code::NotAuthorized);
  EXPECT_EQ(alice.provide("SVC", ""), wire::Code::NotAuthorized);
}

// $SYS (issue 29): the broker's statistics go to admins and to rules that
// name $SYS; a '>' rule is every other topic (as mosquitto's ACL '#');
// nobody publishes them.
TEST(Grants, SysTopicsNeedAnAdminOrARuleThatNamesThem) {
  auto policy = parse(R"(
[users.ops]
admin = true
[users.mon]
[[users.mon.rule]]
allow = ["subscribe", "publish"]
topics = ["$SYS/>"]
[users.all]
[[users.all.rule]]
allow = ["subscribe", "publish"]
topics = [">"]
)");
  ASSERT_TRUE(policy);
  const Grants& ops = *policy->find_user("ops")->grants;
  const Grants& mon = *policy->find_user("mon")->grants;
  const Grants& all = *policy->find_user("all")->grants;
  EXPECT_TRUE(ops.receives("$SYS/broker/uptime", 0));
  EXPECT_TRUE(ops.subscribe("$SYS/broker/>", 0).ok());
  EXPECT_TRUE(mon.receives("$SYS/broker/uptime", 0));
  EXPECT_TRUE(mon.subscribe("$SYS/>", 0).ok());
  EXPECT_FALSE(mon.receives("EQ/IBM", 0));
  EXPECT_FALSE(all.receives("$SYS/broker/uptime", 0));
  EXPECT_EQ(all.subscribe("$SYS/broker/uptime", 0).code, wire::Code::NotAuthorized);
  EXPECT_EQ(all.subscribe("$SYS/>", 0).code, wire::Code::NotAuthorized);
  EXPECT_TRUE(all.receives("EQ/IBM", 0));
  for (const Grants* g : {&ops, &mon, &all}) EXPECT_EQ(g->publish("$SYS/broker/uptime"), wire::Code::NotAuthorized);
}

TEST(Grants, DelayedOnlyForcesTheDelay) {
  auto policy = parse(kFile);
  ASSERT_TRUE(policy);
  const Grants& alice = *policy->find_user("alice")->grants;
  EXPECT_FALSE(alice.receives("LSE/VOD", 0));
  EXPECT_FALSE(alice.receives("LSE/VOD", 899'999));
  EXPECT_TRUE(alice.receives("LSE/VOD", 900'000));
  auto exact = alice.subscribe("LSE/VOD", 0);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact.delay_ms, 900'000u);
  auto wildcard = alice.subscribe("LSE/>", 1'000);
  ASSERT_TRUE(wildcard.ok());
  EXPECT_EQ(wildcard.delay_ms, 900'000u);
  EXPECT_EQ(alice.subscribe("LSE/>", 1'000'000).delay_ms, 1'000'000u);  // a longer delay stays
  EXPECT_EQ(alice.subscribe("EQ/IBM", 0).delay_ms, 0u);  // real time where entitled
}

TEST(Grants, ServicesBelongToTheirProviders) {
  auto policy = parse(kFile);
  ASSERT_TRUE(policy);
  const Grants& feed = *policy->find_user("feed")->grants;
  EXPECT_EQ(feed.provide("SVC", ""), wire::Code::Ok);
  EXPECT_EQ(feed.provide("SVC", "SVC/A/*"), wire::Code::Ok);
  EXPECT_EQ(feed.provide("OTHER", ""), wire::Code::NotAuthorized);
  EXPECT_EQ(feed.publish("SVC/X"), wire::Code::Ok);
  EXPECT_EQ(policy->find_user("alice")->grants->publish("SVC/X"), wire::Code::NotProvider);
  EXPECT_EQ(policy->anonymous()->publish("SVC/X"), wire::Code::NotProvider);
}

TEST(Grants, AnonymousHasItsOwnRules) {
  auto policy = parse(kFile);
  ASSERT_TRUE(policy);
  const Grants& anon = *policy->anonymous();
  EXPECT_TRUE(anon.receives("PUBLIC/NEWS", 0));
  EXPECT_FALSE(anon.receives("EQ/IBM", 0));
  EXPECT_EQ(anon.publish("PUBLIC/NEWS"), wire::Code::NotAuthorized);
}

TEST(Policy, ErrorsNameFileLineAndKey) {
  struct Case {
    const char* text;
    const char* expected;
  };
  for (const Case& c : {
           Case{"[users.a]\npassword = \"plain\"\n", "not an argon2id hash"},
           Case{"[users.a]\ngroups = [\"nope\"]\n", "unknown group 'nope'"},
           Case{"[users.a]\n[[users.a.rule]]\nallow = [\"read\"]\ntopics = [\"A\"]\n", "unknown permission 'read'"},
           Case{"[users.a]\n[[users.a.rule]]\nallow = [\"publish\"]\ndeny = [\"publish\"]\ntopics = [\"A\"]\n",
                "exactly one of"},
           Case{"[users.a]\n[[users.a.rule]]\nallow = [\"subscribe-delayed\"]\ntopics = [\"A\"]\n", "delay_s"},
           Case{"[users.a]\n[[users.a.rule]]\nallow = [\"publish\"]\ntopics = [\"A/>/B\"]\n", "topic pattern"},
           Case{"[users.a]\nshoe = 1\n", "users.a.shoe"},
           Case{"[other]\n", "unknown key 'other'"},
           Case{"[users.a]\nmax_channels = 0\n", "users.a.max_channels: expected 1..4294967295"},
           Case{"[users.a]\nmax_channels = \"many\"\n", "users.a.max_channels: expected an integer"},
       }) {
    auto p = Policy::parse(c.text, "users.toml");
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_NE(p.error().message.find(c.expected), std::string::npos) << p.error().message;
    EXPECT_EQ(p.error().message.rfind("users.toml", 0), 0u) << p.error().message;
  }
}

TEST(Policy, AUsersChannelBoundIsItsGrants) {
  auto policy = parse("[users.feed]\nmax_channels = 500\n[users.bob]\n");
  ASSERT_TRUE(policy);
  EXPECT_EQ(policy->find_user("feed")->grants->max_channels(), 500u);
  EXPECT_EQ(policy->find_user("bob")->grants->max_channels(), 0u);  // the broker's max_channels_per_user
}

TEST(Policy, CertificatesMapToUsersByKind) {
  using Kind = CertificateName::Kind;
  auto policy = parse("[users.bob]\ncertificates = [\"bob.example.com\"]\n"
                      "[users.feed]\ncertificates = [\"DNS:feed.example.com\"]\n");
  ASSERT_TRUE(policy);
  EXPECT_EQ(policy->find_by_certificate({Kind::Subject, "bob.example.com"})->name, "bob");
  EXPECT_EQ(policy->find_by_certificate({Kind::Dns, "bob.example.com"}), nullptr) << "a subject entry is no DNS name";
  EXPECT_EQ(policy->find_by_certificate({Kind::Dns, "feed.example.com"})->name, "feed");
  EXPECT_EQ(policy->find_by_certificate({Kind::Subject, "DNS:feed.example.com"}), nullptr) << "nor the reverse";
  EXPECT_EQ(policy->find_by_certificate({Kind::Subject, "eve.example.com"}), nullptr);
  EXPECT_EQ(policy->find_by_certificate({Kind::Subject, ""}), nullptr);
}

}  // namespace
}  // namespace tw::auth

namespace tw::auth {
namespace {

// Issue 28: the consume right names durable queues (a queue name is one level).
TEST(Grants, ConsumeNamesQueues) {
  auto policy = parse(R"(
[users.desk]
[[users.desk.rule]]
allow = ["consume"]
topics = ["orders", "fills"]
[[users.desk.rule]]
allow = ["subscribe", "publish"]
topics = [">"]

[users.ops]
[[users.ops.rule]]
allow = ["consume"]
topics = ["*"]
[[users.ops.rule]]
deny = ["consume"]
topics = ["payroll"]
)");
  ASSERT_TRUE(policy);
  const Grants& desk = *policy->find_user("desk")->grants;
  EXPECT_TRUE(desk.consumes("fills"));
  EXPECT_TRUE(desk.consumes("orders"));
  EXPECT_FALSE(desk.consumes("audit"));  // subscribe and publish do not imply consume
  const Grants& ops = *policy->find_user("ops")->grants;
  EXPECT_TRUE(ops.consumes("audit"));
  EXPECT_FALSE(ops.consumes("payroll"));  // deny wins
}

}  // namespace
}  // namespace tw::auth
