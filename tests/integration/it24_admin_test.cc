// IT24: the admin API over the broker's HTTP listener (docs/operations.md),
// in every thread shape: its counts equal what the test did, a REST publish
// reaches a native subscriber, a REST snapshot equals `tickwire snapshot
// --json`, admin actions are refused to users who are not admins, and
// `tickwire top` shows the view.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "admin/http_client.h"
#include "auth/password.h"
#include "integration/it_support.h"
#include "testlib/fields.h"

namespace tw::it {
namespace {

using Json = nlohmann::json;
using testing::bin_path;
using testing::run_to_completion;

BrokerOptions with_http(BrokerOptions options = {}) {
  options.args.insert(options.args.end(), {"--http-listen", "127.0.0.1:0"});
  return options;
}

admin::HttpTarget target_of(const BrokerProcess& broker, std::string user = {}, std::string password = {}) {
  admin::HttpTarget t;
  t.port = broker.http_port();
  t.user = std::move(user);
  t.password = std::move(password);
  return t;
}

Json get_json(const admin::HttpTarget& t, const std::string& path) {
  auto reply = admin::http_request(t, "GET", path);
  if (!reply || reply->status != 200) return Json();
  return Json::parse(reply->body, nullptr, false);
}

// Polls `path` until `done` holds for its JSON (the loops publish their counts every 50 ms); bounded.
Json poll_json(const admin::HttpTarget& t, const std::string& path, const std::function<bool(const Json&)>& done) {
  Json j;
  for (int i = 0; i < 100; ++i) {
    j = get_json(t, path);
    if (!j.is_discarded() && !j.is_null() && done(j)) return j;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return j;
}

const Json* find_client(const Json& connections, const std::string& name) {
  for (const Json& c : connections["connections"])
    if (c["client"] == name) return &c;
  return nullptr;
}

class AdminHttp : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(broker_.ready()) << broker_.err();
    ASSERT_NE(broker_.http_port(), 0) << "no HTTP port in the port file";
  }
  BrokerProcess broker_{with_http()};
};

TEST_F(AdminHttp, CountsEqualWhatTheTestDid) {
  RawClient pub, sub;
  ASSERT_TRUE(open_client(pub, broker_.port(), "it24-pub"));
  ASSERT_TRUE(open_client(sub, broker_.port(), "it24-sub"));
  ASSERT_TRUE(pub.register_topic(1, wire::PayloadKind::FieldList, "IT24/A"));
  ASSERT_TRUE(pub.publish(1, int_payload(0), /*image=*/true));
  ASSERT_TRUE(sub.subscribe(1, "IT24/>"));
  StreamModel model;
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return model.messages_on("IT24/A") == 1; }));
  constexpr uint64_t kUpdates = 25;
  for (uint64_t i = 1; i <= kUpdates; ++i) ASSERT_TRUE(pub.publish(1, int_payload(static_cast<int64_t>(i))));
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return model.messages_on("IT24/A") == 1 + kUpdates; }));

  const admin::HttpTarget t = target_of(broker_);
  const Json stats = poll_json(t, "/api/v1/stats", [&](const Json& s) {
    return s["msgs_in"] == 1 + kUpdates && s["msgs_out"] == kUpdates &&
           s["bytes_in"] == pub.bytes_sent() + sub.bytes_sent();
  });
  EXPECT_EQ(stats["msgs_in"], 1 + kUpdates) << stats.dump();
  EXPECT_EQ(stats["msgs_out"], kUpdates);  // the image a subscription starts with is not a delivery
  EXPECT_EQ(stats["connections"], 2);
  EXPECT_EQ(stats["subscriptions"], 1);
  EXPECT_EQ(stats["bytes_in"], pub.bytes_sent() + sub.bytes_sent());

  const Json all = poll_json(t, "/api/v1/connections", [&](const Json& j) {
    const Json* s = find_client(j, "it24-sub");
    const Json* p = find_client(j, "it24-pub");
    return s && p && (*s)["bytes_out"] == sub.bytes_received() && (*p)["bytes_in"] == pub.bytes_sent();
  });
  ASSERT_EQ(all["connections"].size(), 2u) << all.dump();
  const Json* s = find_client(all, "it24-sub");
  const Json* p = find_client(all, "it24-pub");
  ASSERT_TRUE(s && p) << all.dump();
  EXPECT_EQ((*s)["subscriptions"], 1);
  EXPECT_EQ((*s)["msgs_out"], 1 + kUpdates);    // the image and the updates
  EXPECT_EQ((*s)["msgs_in"], 2);                // HELLO, SUBSCRIBE
  EXPECT_EQ((*s)["bytes_in"], sub.bytes_sent());
  EXPECT_EQ((*s)["bytes_out"], sub.bytes_received());
  EXPECT_EQ((*p)["msgs_in"], 3 + kUpdates);     // HELLO, REGISTER, the image, the updates
  EXPECT_EQ((*p)["bytes_in"], pub.bytes_sent());
  EXPECT_EQ((*p)["protocol"], "native");

  const Json channels = get_json(t, "/api/v1/channels?prefix=IT24%2F");
  ASSERT_EQ(channels["channels"].size(), 1u) << channels.dump();
  EXPECT_EQ(channels["channels"][0]["topic"], "IT24/A");
  EXPECT_EQ(channels["channels"][0]["seq"], 1 + kUpdates);
  EXPECT_EQ(channels["channels"][0]["subscribers"], 1);
}

TEST_F(AdminHttp, RestPublishReachesANativeSubscriberAndSnapshotEqualsTheCli) {
  RawClient sub;
  ASSERT_TRUE(open_client(sub, broker_.port(), "it24-sub"));
  ASSERT_TRUE(sub.subscribe(1, "REST/>"));
  const admin::HttpTarget t = target_of(broker_);
  auto posted = admin::http_request(t, "POST", "/api/v1/publish/REST/A", R"({"fields":{"1:int":42,"BID":"189.25"}})",
                                    "application/json");
  ASSERT_TRUE(posted.ok()) << posted.error().message;
  ASSERT_EQ(posted->status, 200) << posted->body;
  StreamModel model;
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return model.messages_on("REST/A") == 1; }));
  EXPECT_EQ(testing::int_field(model.find("REST/A")->image, 1), 42);

  auto snap = admin::http_request(t, "GET", "/api/v1/snapshot/REST/A");
  ASSERT_TRUE(snap.ok());
  ASSERT_EQ(snap->status, 200) << snap->body;
  auto cli = run_to_completion(bin_path("tickwire"),
                               {"-s", "127.0.0.1:" + std::to_string(broker_.port()), "snapshot", "REST/A", "--json"});
  ASSERT_TRUE(cli.status.clean()) << cli.err;
  EXPECT_EQ(snap->body, cli.out);
  EXPECT_EQ(admin::http_request(t, "GET", "/api/v1/snapshot/REST/NONE")->status, 404);
}

TEST_F(AdminHttp, TopShowsTheView) {
  RawClient sub;
  ASSERT_TRUE(open_client(sub, broker_.port(), "it24-top-sub"));
  ASSERT_TRUE(sub.subscribe(1, "TOP/>"));
  auto top = run_to_completion(bin_path("tickwire"),
                               {"top", "--once", "--http", "127.0.0.1:" + std::to_string(broker_.http_port())});
  ASSERT_TRUE(top.status.clean()) << top.err;
  EXPECT_NE(top.out.find("connections 1"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("it24-top-sub"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("BUSY"), std::string::npos) << top.out;
}

std::string hash(const std::string& password) {
  auto h = auth::hash_password(password, auth::HashCost{1, 1024, 1});  // cheap: tests only
  return h ? *h : std::string();
}

TEST(AdminHttpAuth, AdminActionsAndRestFollowTheUsersFile) {
  testing::TempDir dir;
  std::string users = "[users.ops]\npassword = \"" + hash("ops-pw") + "\"\nadmin = true\n";
  users += "[users.alice]\npassword = \"" + hash("alice-pw") + "\"\n";
  users += "[[users.alice.rule]]\nallow = [\"subscribe\", \"publish\"]\ntopics = [\"EQ/>\"]\n";
  BrokerOptions options = with_http();
  options.config_toml = "auth_file = \"" + dir.write("users.toml", users) + "\"\nauth_failure_delay_ms = 10\n";
  BrokerProcess broker(options);
  ASSERT_TRUE(broker.ready()) << broker.err();
  const admin::HttpTarget alice = target_of(broker, "alice", "alice-pw");
  const admin::HttpTarget ops = target_of(broker, "ops", "ops-pw");

  EXPECT_EQ(admin::http_request(target_of(broker), "GET", "/api/v1/stats")->status, 401);
  EXPECT_EQ(admin::http_request(alice, "GET", "/api/v1/stats")->status, 200);
  EXPECT_EQ(admin::http_request(alice, "GET", "/api/v1/connections")->status, 403);
  EXPECT_EQ(admin::http_request(alice, "DELETE", "/api/v1/channels/EQ/A")->status, 403);
  EXPECT_EQ(admin::http_request(alice, "DELETE", "/api/v1/connections/0-1")->status, 403);
  EXPECT_EQ(admin::http_request(ops, "GET", "/api/v1/connections")->status, 200);

  EXPECT_EQ(admin::http_request(alice, "POST", "/api/v1/publish/FX/EUR", "x")->status, 403);
  EXPECT_EQ(admin::http_request(alice, "POST", "/api/v1/publish/EQ/A", "x")->status, 200);
  EXPECT_EQ(admin::http_request(alice, "GET", "/api/v1/snapshot/EQ/A")->status, 200);
  EXPECT_EQ(admin::http_request(ops, "GET", "/api/v1/snapshot/EQ/A")->status, 403);  // ops has no subscribe rule
  EXPECT_EQ(admin::http_request(ops, "DELETE", "/api/v1/channels/EQ/A")->status, 200);
}

}  // namespace
}  // namespace tw::it
