// IT24: the admin API over the broker's HTTP listener (docs/operations.md),
// in every thread shape: its counts equal what the test did, a REST publish
// reaches a native subscriber, a REST snapshot equals `tickwire snapshot
// --json`, admin actions are refused to users who are not admins, and
// `tickwire top` shows the view.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>

#include "admin/http_client.h"
#include "auth/password.h"
#include "http/basic_auth.h"
#include "testlib/blocking_socket.h"
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

// curl (a real client) POSTing to REST publish: its status line and body.
struct CurlReply {
  int status = 0;
  std::string body;
};
CurlReply curl_post(const BrokerProcess& broker, const std::string& topic, std::vector<std::string> args) {
  args.insert(args.begin(), {"-s", "-w", "\n%{http_code}"});
  args.push_back("http://127.0.0.1:" + std::to_string(broker.http_port()) + "/api/v1/publish/" + topic);
  auto run = run_to_completion("/usr/bin/curl", args);
  CurlReply reply;
  const size_t last = run.out.rfind('\n');
  if (!run.status.clean() || last == std::string::npos) return reply;
  reply.status = std::atoi(run.out.c_str() + last + 1);
  reply.body = run.out.substr(0, last);
  return reply;
}

bool mentions(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Issue 29, item 8: `curl -d` sends a form; it is refused with the way to
// publish, and does not make the channel an opaque one.
TEST_F(AdminHttp, CurlFormBodyIsRefusedWithHowToPublish) {
  const CurlReply form = curl_post(broker_, "IT29/FORM", {"-d", "BID=189.25"});
  EXPECT_EQ(form.status, 415) << form.body;
  EXPECT_TRUE(mentions(form.body, "-H 'Content-Type: application/json'")) << form.body;
  EXPECT_TRUE(mentions(form.body, "Content-Type: application/octet-stream")) << form.body;
  EXPECT_TRUE(mentions(form.body, "text/plain")) << form.body;
  const CurlReply multipart = curl_post(broker_, "IT29/FORM", {"-F", "BID=189.25"});
  EXPECT_EQ(multipart.status, 415) << multipart.body;

  const CurlReply json = curl_post(broker_, "IT29/FORM", {"-H", "Content-Type: application/json", "-d", R"({"BID":189.25})"});
  EXPECT_EQ(json.status, 200) << "the refused form made no channel: " << json.body;
  const CurlReply text = curl_post(broker_, "IT29/TEXT", {"-H", "Content-Type: text/plain", "-d", "hello"});
  EXPECT_EQ(text.status, 200) << text.body;
}

TEST_F(AdminHttp, KindMismatchSaysWhatTheChannelCarriesAndHowToPublishIt) {
  ASSERT_EQ(curl_post(broker_, "IT29/OPAQUE", {"-H", "Content-Type: application/octet-stream", "-d", "x"}).status, 200);
  const CurlReply fields = curl_post(broker_, "IT29/OPAQUE", {"-H", "Content-Type: application/json", "-d", R"({"BID":1})"});
  EXPECT_EQ(fields.status, 409) << fields.body;
  EXPECT_TRUE(mentions(fields.body, "IT29/OPAQUE carries opaque messages, not field lists")) << fields.body;
  EXPECT_TRUE(mentions(fields.body, "Content-Type: application/octet-stream")) << fields.body;

  ASSERT_EQ(curl_post(broker_, "IT29/FIELDS", {"-H", "Content-Type: application/json", "-d", R"({"BID":1})"}).status,
            200);
  const CurlReply opaque = curl_post(broker_, "IT29/FIELDS", {"-H", "Content-Type: text/plain", "-d", "x"});
  EXPECT_EQ(opaque.status, 409) << opaque.body;
  EXPECT_TRUE(mentions(opaque.body, "IT29/FIELDS carries field lists, not opaque messages")) << opaque.body;
  EXPECT_TRUE(mentions(opaque.body, "-H 'Content-Type: application/json'")) << opaque.body;
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


// Issue 25 (items 2, 3, 4): the admin API authorises each request by the
// users file in force when it arrives, and shows each asker only what it may see.
namespace security {

// "[users.NAME]" with a password, admin or not, and optional rule lines.
std::string user_entry(const std::string& name, bool admin, const std::string& rules = {}) {
  return "[users." + name + "]\npassword = \"" + hash(name + "-pw") + "\"\nadmin = " + (admin ? "true" : "false") +
         "\n" + rules;
}

std::string eq_subscriber_rules(const std::string& name) {
  return "[[users." + name + ".rule]]\nallow = [\"subscribe\"]\ntopics = [\"EQ/>\"]\n";
}

// One request on a kept-alive socket; the reply up to the end of its JSON body.
std::string ask_on(testing::BlockingSocket& s, const std::string& method, const std::string& path,
                   const std::string& credentials) {
  s.forget();
  EXPECT_TRUE(s.send(method + " " + path + " HTTP/1.1\r\nHost: t\r\nAuthorization: Basic " +
                     http::base64_encode(credentials) + "\r\n\r\n"));
  return s.read_until("}\n");
}

// Waits until the broker logged its reload number `count` of the users file.
bool reloaded(const BrokerProcess& broker, size_t count) {
  for (int i = 0; i < 500; ++i) {
    const std::string err = broker.err();
    size_t seen = 0;
    for (size_t at = err.find("reloaded "); at != std::string::npos; at = err.find("reloaded ", at + 1)) ++seen;
    if (seen >= count) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(AdminHttpRevocation, AKeptAliveAdminConnectionLosesItsRightsOnReload) {
  testing::TempDir dir;
  const std::string users_path = dir.write("users.toml", user_entry("ops", true) + user_entry("alice", false));
  BrokerOptions options = with_http();
  options.config_toml = "auth_file = \"" + users_path + "\"\nauth_failure_delay_ms = 10\n";
  options.log_level = "info";  // "reloaded ..." tells the reload is in force
  BrokerProcess broker(options);
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient victim;
  ASSERT_TRUE(victim.connect(broker.port()));
  ASSERT_TRUE(victim.login("it24-victim", "alice", "alice-pw"));

  testing::BlockingSocket ops(broker.http_port());
  ASSERT_TRUE(ops.connected());
  std::string reply = ask_on(ops, "GET", "/api/v1/connections", "ops:ops-pw");
  ASSERT_EQ(reply.find("HTTP/1.1 200 OK"), 0u) << reply;
  EXPECT_NE(reply.find("it24-victim"), std::string::npos) << reply;

  // ops demoted: the same connection, the same credentials, no admin action any more.
  dir.write("users.toml", user_entry("ops", false) + user_entry("alice", false));
  broker.send_signal(SIGHUP);
  ASSERT_TRUE(reloaded(broker, 1)) << broker.err();
  reply = ask_on(ops, "GET", "/api/v1/connections", "ops:ops-pw");
  EXPECT_EQ(reply.find("HTTP/1.1 403 "), 0u) << reply;
  reply = ask_on(ops, "DELETE", "/api/v1/channels/EQ/A", "ops:ops-pw");
  EXPECT_EQ(reply.find("HTTP/1.1 403 "), 0u) << reply;
  reply = ask_on(ops, "DELETE", "/api/v1/connections/0-1", "ops:ops-pw");
  EXPECT_EQ(reply.find("HTTP/1.1 403 "), 0u) << reply;

  // ops removed: its credentials are refused on the same connection.
  dir.write("users.toml", user_entry("alice", false));
  broker.send_signal(SIGHUP);
  ASSERT_TRUE(reloaded(broker, 2)) << broker.err();
  ops.forget();
  ASSERT_TRUE(ops.send("GET /api/v1/connections HTTP/1.1\r\nHost: t\r\nAuthorization: Basic " +
                       http::base64_encode("ops:ops-pw") + "\r\n\r\n"));
  reply = ops.read_until("bad credentials\n");
  EXPECT_EQ(reply.find("HTTP/1.1 401 "), 0u) << reply;
}

// The channel rows' topics in a listing's JSON.
std::vector<std::string> topics_of(const Json& listing, const char* key, const char* field) {
  std::vector<std::string> out;
  for (const Json& row : listing[key]) out.push_back(row[field].get<std::string>());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(AdminHttpListings, ChannelsAndServicesShowWhatTheAskerMayReceive) {
  testing::TempDir dir;
  std::string users = user_entry("ops", true) + user_entry("alice", false, eq_subscriber_rules("alice"));
  users += user_entry("feed", false, "[[users.feed.rule]]\nallow = [\"publish\"]\ntopics = [\">\"]\n");
  users += "[anonymous]\n[[anonymous.rule]]\nallow = [\"subscribe\"]\ntopics = [\"PUB/>\"]\n";
  BrokerOptions options = with_http();
  options.config_toml = "auth_file = \"" + dir.write("users.toml", users) +
                        "\"\nauth_failure_delay_ms = 10\nallow_anonymous = true\n";
  BrokerProcess broker(options);
  ASSERT_TRUE(broker.ready()) << broker.err();
  const admin::HttpTarget feed = target_of(broker, "feed", "feed-pw");
  for (const char* topic : {"EQ/A", "FX/EUR", "PUB/NEWS"}) {
    auto posted = admin::http_request(feed, "POST", std::string("/api/v1/publish/") + topic, "x");
    ASSERT_TRUE(posted.ok() && posted->status == 200) << topic;
  }
  using Topics = std::vector<std::string>;
  const Json all = poll_json(target_of(broker, "ops", "ops-pw"), "/api/v1/channels",
                             [](const Json& j) { return j["channels"].size() == 3; });
  EXPECT_EQ(topics_of(all, "channels", "topic"), (Topics{"EQ/A", "FX/EUR", "PUB/NEWS"})) << all.dump();
  EXPECT_EQ(topics_of(get_json(target_of(broker, "ops", "ops-pw"), "/api/v1/services"), "services", "name"),
            (Topics{"EQ", "FX", "PUB"}));
  const admin::HttpTarget alice = target_of(broker, "alice", "alice-pw");
  EXPECT_EQ(topics_of(get_json(alice, "/api/v1/channels"), "channels", "topic"), Topics{"EQ/A"});
  EXPECT_EQ(topics_of(get_json(alice, "/api/v1/services"), "services", "name"), Topics{"EQ"});
  const admin::HttpTarget anonymous = target_of(broker);
  EXPECT_EQ(topics_of(get_json(anonymous, "/api/v1/channels"), "channels", "topic"), Topics{"PUB/NEWS"});
  EXPECT_EQ(topics_of(get_json(anonymous, "/api/v1/services"), "services", "name"), Topics{"PUB"});
  EXPECT_EQ(topics_of(get_json(feed, "/api/v1/channels"), "channels", "topic"), Topics{}) << "publish only";
}

TEST(AdminHttpMetrics, PerUserSeriesGoToAdminsAndEachUserSeesItsOwn) {
  testing::TempDir dir;
  std::string users = user_entry("ops", true) + user_entry("alice", false, eq_subscriber_rules("alice")) +
                      user_entry("bob", false, eq_subscriber_rules("bob"));
  BrokerOptions options = with_http();
  options.config_toml = "auth_file = \"" + dir.write("users.toml", users) + "\"\nauth_failure_delay_ms = 10\n" +
                        "usage_log = \"" + dir.file("usage.log") + "\"\nusage_interval_ms = 100\n";
  BrokerProcess broker(options);
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient alice_client, bob_client;
  ASSERT_TRUE(alice_client.connect(broker.port()));
  ASSERT_TRUE(alice_client.login("it24-alice", "alice", "alice-pw"));
  ASSERT_TRUE(bob_client.connect(broker.port()));
  ASSERT_TRUE(bob_client.login("it24-bob", "bob", "bob-pw"));
  auto metrics = [&](const std::string& user) {
    auto reply = admin::http_request(target_of(broker, user, user.empty() ? "" : user + "-pw"), "GET", "/metrics");
    return reply ? std::to_string(reply->status) + "\n" + reply->body : std::string("no reply");
  };
  // The admin sees both users once the loops reported their logins.
  std::string ops;
  for (int i = 0; i < 200; ++i) {
    ops = metrics("ops");
    if (ops.find("user=\"alice\"") != std::string::npos && ops.find("user=\"bob\"") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_NE(ops.find("tickwire_user_logins_total{user=\"alice\"} 1"), std::string::npos) << ops;
  EXPECT_NE(ops.find("tickwire_user_logins_total{user=\"bob\"} 1"), std::string::npos) << ops;
  const std::string alice = metrics("alice");
  EXPECT_EQ(alice.find("200\n"), 0u) << alice;
  EXPECT_NE(alice.find("tickwire_user_logins_total{user=\"alice\"} 1"), std::string::npos) << alice;
  EXPECT_EQ(alice.find("user=\"bob\""), std::string::npos) << alice;
  EXPECT_EQ(alice.find("user=\"ops\""), std::string::npos) << alice;
  EXPECT_NE(alice.find("tickwire_messages_in_total"), std::string::npos) << "the broker's counts stay";
  // Without credentials (anonymous off): no metrics at all (item 14).
  EXPECT_EQ(metrics("").find("401\n"), 0u);
}

}  // namespace security

// The value of the first sample that starts `line_start` ("name" or `name{labels}`); nullopt if absent.
std::optional<double> sample_value(const std::string& text, const std::string& line_start) {
  const size_t at = text.find("\n" + line_start + " ");
  if (at == std::string::npos) return std::nullopt;
  return std::stod(text.substr(at + line_start.size() + 2));
}

// Process metrics as the Prometheus client libraries name them, the build's
// version, and connections by protocol: scraped from a real broker with one
// native and one MQTT (mosquitto_sub) connection open. The broker runs with
// 512 descriptors (soft and hard), so process_max_fds must be the broker's own.
TEST(AdminHttpMetrics, ProcessBuildAndPerProtocolConnectionSeries) {
  const std::string kSub = "/usr/bin/mosquitto_sub";
  if (::access(kSub.c_str(), X_OK) != 0) GTEST_SKIP() << "mosquitto-clients missing: run scripts/deps.sh";
  const double test_start =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const uint16_t mqtt_port = testing::pick_free_port();
  const uint16_t http_port = testing::pick_free_port();
  BrokerOptions options;  // with [[listener]] tables, the HTTP listener is one of them
  options.config_toml = native_and_mqtt_listeners(mqtt_port) + "[[listener]]\nprotocol = \"http\"\naddress = \"127.0.0.1:" +
                        std::to_string(http_port) + "\"\n";
  options.file_limit = 512;
  BrokerProcess broker(options);
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient native;
  ASSERT_TRUE(open_client(native, broker.port(), "it24-native"));
  testing::Process mqtt("/usr/bin/stdbuf", {"-oL", kSub, "-h", "127.0.0.1", "-p", std::to_string(mqtt_port), "-t",
                                            "IT24/MQTT", "-d", "-W", "30"});
  ASSERT_TRUE(mqtt.wait_for_out("SUBACK", 10'000)) << mqtt.out() << mqtt.err();

  admin::HttpTarget t;
  t.port = http_port;
  std::string text;
  for (int i = 0; i < 100; ++i) {  // until the connections' summary shows both (asked of the loops per scrape)
    auto reply = admin::http_request(t, "GET", "/metrics");
    text = reply && reply->status == 200 ? reply->body : "";
    if (text.find("tickwire_connections{protocol=\"mqtt\"} 1\n") != std::string::npos &&
        text.find("tickwire_connections{protocol=\"native\"} 1\n") != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(text.find("\ntickwire_connections{protocol=\"native\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ntickwire_connections{protocol=\"mqtt\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ntickwire_connections{protocol=\"stream\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ntickwire_build_info{version=\"" TW_VERSION "\"} 1\n"), std::string::npos) << text;
  EXPECT_EQ(sample_value(text, "process_max_fds"), 512) << text;
  // Listeners, the epoll and event descriptors and the two connections: more than a handful, fewer than the limit.
  EXPECT_GT(sample_value(text, "process_open_fds").value_or(0), 5) << text;
  EXPECT_LT(sample_value(text, "process_open_fds").value_or(1e9), 512) << text;
  EXPECT_GT(sample_value(text, "process_resident_memory_bytes").value_or(0), 1 << 20) << text;
  EXPECT_GE(sample_value(text, "process_virtual_memory_bytes").value_or(0),
            sample_value(text, "process_resident_memory_bytes").value_or(1e18))
      << text;
  EXPECT_GE(sample_value(text, "process_cpu_seconds_total").value_or(-1), 0) << text;
  // The process started after the test began and before the broker's statistics did, up to the resolution of
  // what /proc gives: the boot time in whole seconds, the start in 10 ms ticks after it.
  const auto process_start = sample_value(text, "process_start_time_seconds");
  const auto broker_start = sample_value(text, "tickwire_start_time_seconds");
  ASSERT_TRUE(process_start && broker_start) << text;
  EXPECT_GE(*process_start, test_start - 1.1) << text;
  EXPECT_LE(*process_start, *broker_start + 1.1) << text;
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter\n"), std::string::npos) << text;

  if (::access("/usr/bin/promtool", X_OK) == 0) {
    testing::TempDir dir;
    const std::string file = dir.write("metrics.txt", text);
    auto check = run_to_completion("/bin/sh", {"-c", "/usr/bin/promtool check metrics < '" + file + "'"});
    EXPECT_TRUE(check.status.clean()) << check.out << check.err;
    EXPECT_EQ(check.out + check.err, "") << "promtool has remarks";
  }
}

}  // namespace
}  // namespace tw::it
