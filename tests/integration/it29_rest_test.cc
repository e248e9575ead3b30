// Issue 29, the rest: each connection's subscriptions in the admin API
// (/api/v1/connections/ID/subscriptions, what the console's connections page
// shows), the field dictionary a broker extends by configuration and every
// surface sees (`tickwire fields`, REST, MQTT JSON), and `$SYS` topics.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "admin/http_client.h"
#include "auth/password.h"
#include "integration/it_support.h"

namespace tw::it {
namespace {

using Json = nlohmann::json;
using testing::bin_path;
using testing::Process;
using testing::run_to_completion;

constexpr int kWaitMs = testing::kDefaultTimeoutMs;  // a safety net, never a performance bound

BrokerOptions with_http(std::string config_toml = {}) {
  BrokerOptions options;
  options.args = {"--http-listen", "127.0.0.1:0"};
  options.config_toml = std::move(config_toml);
  return options;
}

admin::HttpTarget http_of(const BrokerProcess& broker, std::string user = {}, std::string password = {}) {
  admin::HttpTarget t;
  t.port = broker.http_port();
  t.user = std::move(user);
  t.password = std::move(password);
  return t;
}

std::string server_of(const BrokerProcess& broker) { return "127.0.0.1:" + std::to_string(broker.port()); }

Json get_json(const admin::HttpTarget& t, const std::string& path, int* status = nullptr) {
  auto reply = admin::http_request(t, "GET", path);
  if (status) *status = reply.ok() ? reply->status : 0;
  if (!reply || reply->status != 200) return Json();
  return Json::parse(reply->body, nullptr, false);
}

// The id of the connection named `client` once it holds `subscriptions` patterns ("" after the deadline).
std::string connection_id(const admin::HttpTarget& admin, const std::string& client, unsigned subscriptions) {
  for (int i = 0; i < kWaitMs / 20; ++i) {
    const Json list = get_json(admin, "/api/v1/connections");
    if (list.is_object()) {
      for (const Json& c : list["connections"])
        if (c["client"] == client && c["subscriptions"] == subscriptions) return c["id"].get<std::string>();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return {};
}

std::string hash(const std::string& password) {
  auto h = auth::hash_password(password, auth::HashCost{1, 1024, 1});  // cheap: tests only
  return h ? *h : std::string();
}

// --- each connection's subscriptions -----------------------------------------

TEST(It29Subscriptions, EachPatternWithItsPolicyConflationAndDelay) {
  BrokerProcess broker(with_http());
  ASSERT_TRUE(broker.ready()) << broker.err();
  Process sub(bin_path("tickwire"), {"--name", "it29-subs", "-s", server_of(broker), "sub", "IT29/SUBS/>",
                                     "--slow-policy", "drop", "--conflate", "250", "--delay", "2"});
  const admin::HttpTarget t = http_of(broker);
  const std::string id = connection_id(t, "it29-subs", 1);
  ASSERT_FALSE(id.empty()) << sub.err();
  const Json j = get_json(t, "/api/v1/connections/" + id + "/subscriptions");
  ASSERT_TRUE(j.is_object()) << "no answer for " << id;
  EXPECT_EQ(j["connection"], id);
  ASSERT_EQ(j["subscriptions"].size(), 1u) << j.dump();
  const Json& s = j["subscriptions"][0];
  EXPECT_EQ(s["pattern"], "IT29/SUBS/>") << j.dump();
  EXPECT_EQ(s["policy"], "drop") << j.dump();
  EXPECT_EQ(s["conflate_ms"], 250) << j.dump();
  EXPECT_EQ(s["delay_ms"], 2000) << j.dump();

  int status = 0;
  get_json(t, "/api/v1/connections/0-99999/subscriptions", &status);
  EXPECT_EQ(status, 404);
  get_json(t, "/api/v1/connections/nonsense/subscriptions", &status);
  EXPECT_EQ(status, 400);
}

TEST(It29Subscriptions, AUserSeesOnlyItsOwnConnections) {
  testing::TempDir dir;
  auto user = [](const std::string& name, bool admin) {
    return "[users." + name + "]\npassword = \"" + hash(name + "-pw") + "\"\nadmin = " + (admin ? "true" : "false") +
           "\n[[users." + name + ".rule]]\nallow = [\"subscribe\"]\ntopics = [\"EQ/>\"]\n";
  };
  const std::string users = user("ops", true) + user("alice", false) + user("bob", false);
  BrokerProcess broker(with_http("auth_file = \"" + dir.write("users.toml", users) +
                                 "\"\nauth_failure_delay_ms = 10\n"));
  ASSERT_TRUE(broker.ready()) << broker.err();
  Process sub(bin_path("tickwire"), {"--name", "it29-alice", "--user", "alice", "--password-file",
                                     dir.write("alice.pw", "alice-pw\n"), "-s", server_of(broker), "sub", "EQ/A"});
  const std::string id = connection_id(http_of(broker, "ops", "ops-pw"), "it29-alice", 1);
  ASSERT_FALSE(id.empty()) << sub.err();
  const std::string path = "/api/v1/connections/" + id + "/subscriptions";
  int status = 0;
  EXPECT_EQ(get_json(http_of(broker, "ops", "ops-pw"), path, &status)["subscriptions"][0]["pattern"], "EQ/A");
  EXPECT_EQ(get_json(http_of(broker, "alice", "alice-pw"), path, &status)["subscriptions"][0]["pattern"], "EQ/A");
  get_json(http_of(broker, "bob", "bob-pw"), path, &status);
  EXPECT_EQ(status, 404) << "another user's connection is not there for bob";
  get_json(http_of(broker), path, &status);
  EXPECT_EQ(status, 401);
}

// --- the field dictionary -----------------------------------------------------

const std::string kMosquittoSub = "/usr/bin/mosquitto_sub";

// A broker with native, MQTT and HTTP listeners (the MQTT and HTTP ports picked here) and `settings`.
struct ThreeListeners {
  explicit ThreeListeners(const std::string& settings)
      : mqtt_port(testing::pick_free_port()),
        http_port(testing::pick_free_port()),
        broker([&] {
          BrokerOptions options;
          options.config_toml = settings + "[[listener]]\nprotocol = \"native\"\naddress = \"127.0.0.1:0\"\n" +
                                "[[listener]]\nprotocol = \"mqtt\"\naddress = \"127.0.0.1:" +
                                std::to_string(mqtt_port) + "\"\n[[listener]]\nprotocol = \"http\"\naddress = \"127.0.0.1:" +
                                std::to_string(http_port) + "\"\n";
          return options;
        }()) {}
  // `tickwire ARGS` with the admin API's address in $TICKWIRE_HTTP, as a user sets it.
  testing::RunResult tickwire(std::vector<std::string> args) const {
    args.insert(args.begin(), {"TICKWIRE_HTTP=127.0.0.1:" + std::to_string(http_port), bin_path("tickwire"), "-s",
                               server_of(broker)});
    return run_to_completion("/usr/bin/env", args);
  }
  admin::HttpTarget http() const {
    admin::HttpTarget t;
    t.port = http_port;
    return t;
  }
  uint16_t mqtt_port;
  uint16_t http_port;
  BrokerProcess broker;
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(It29Fields, AFieldsFileExtendsTheDictionaryEverySurfaceUses) {
  testing::TempDir dir;
  const std::string fields_file = dir.write("fields.txt", "# our own\nSPREAD_BP 4001 decimal\nVENUE 4002 string\n");
  ThreeListeners b("fields_file = \"" + fields_file + "\"\n");
  ASSERT_TRUE(b.broker.ready()) << b.broker.err();

  auto listed = b.tickwire({"fields"});
  ASSERT_TRUE(listed.status.clean()) << listed.err;
  EXPECT_TRUE(contains(listed.out, " 4001  SPREAD_BP")) << listed.out;
  EXPECT_TRUE(contains(listed.out, "   22  BID")) << listed.out << "the built-in ones stay";
  auto as_json = b.tickwire({"fields", "--json"});
  ASSERT_TRUE(as_json.status.clean()) << as_json.err;
  EXPECT_TRUE(contains(as_json.out, R"({"id":4002,"name":"VENUE","type":"string"})")) << as_json.out;

  // REST publish takes the names; the CLI, REST snapshot and MQTT's JSON show them.
  auto posted = admin::http_request(b.http(), "POST", "/api/v1/publish/IT29/DICT",
                                    R"({"SPREAD_BP":"1.25","VENUE":"XNYS","BID":10})", "application/json");
  ASSERT_TRUE(posted.ok() && posted->status == 200) << (posted ? posted->body : posted.error().message);
  auto snapshot = b.tickwire({"snapshot", "IT29/DICT", "--json"});
  EXPECT_TRUE(contains(snapshot.out, R"("fields":{"BID":"10","SPREAD_BP":"1.25","VENUE":"XNYS"})")) << snapshot.out;
  const Json rest = get_json(b.http(), "/api/v1/snapshot/IT29/DICT");
  EXPECT_EQ(rest["fields"]["SPREAD_BP"], "1.25") << rest.dump();
  auto published = b.tickwire({"pub", "IT29/DICT", "-f", "VENUE=XLON"});
  EXPECT_TRUE(published.status.clean()) << published.err;
  if (::access(kMosquittoSub.c_str(), X_OK) == 0) {
    auto mqtt = run_to_completion(kMosquittoSub, {"-h", "127.0.0.1", "-p", std::to_string(b.mqtt_port), "-t",
                                                  "IT29/DICT", "-C", "1", "-W", "10"});
    EXPECT_TRUE(contains(mqtt.out, R"("SPREAD_BP":"1.25","VENUE":"XLON")")) << mqtt.out << mqtt.err;
  }
}

TEST(It29Fields, ABadFieldsFileStopsTheBrokerWithItsLine) {
  testing::TempDir dir;
  BrokerOptions options;
  options.config_toml = "fields_file = \"" + dir.write("fields.txt", "MINE 4001 int\nMY_BID 22 decimal\n") + "\"\n";
  BrokerProcess broker(options);
  EXPECT_FALSE(broker.ready());
  EXPECT_TRUE(contains(broker.err(), "fields.txt:2: duplicate field id 22")) << broker.err();
}

TEST(It29Fields, RestPublishTakesUnknownIdsAsSubJsonPrintsThem) {
  ThreeListeners b("");
  ASSERT_TRUE(b.broker.ready()) << b.broker.err();
  // A line of `tickwire sub --json` with ids the dictionary does not name.
  const std::string line =
      R"({"type":"update","topic":"IT29/IDS","channel":1,"seq":1,"fields":{"BID":"1.5","#4001":7,"#4002":"XNYS","#4003":2.25}})";
  auto posted = admin::http_request(b.http(), "POST", "/api/v1/publish/IT29/IDS", line, "application/json");
  ASSERT_TRUE(posted.ok()) << posted.error().message;
  EXPECT_EQ(posted->status, 200) << posted->body;
  auto snapshot = b.tickwire({"snapshot", "IT29/IDS", "--json"});
  EXPECT_TRUE(contains(snapshot.out, R"("fields":{"BID":"1.5","#4001":7,"#4002":"XNYS","#4003":"2.25"})"))
      << snapshot.out << snapshot.err;
}

// --- $SYS -------------------------------------------------------------------------

// mosquitto_sub's -v lines ("TOPIC PAYLOAD") of `count` messages on `filter`, as `user` when not empty.
testing::RunResult mosquitto_sub(uint16_t port, const std::string& filter, int count, const std::string& user = {}) {
  std::vector<std::string> args = {"-h", "127.0.0.1", "-p", std::to_string(port), "-t", filter, "-v",
                                   "-C", std::to_string(count), "-W", "5"};
  if (!user.empty()) args.insert(args.end(), {"-u", user, "-P", user + "-pw"});
  return run_to_completion(kMosquittoSub, args, 10'000);
}

TEST(It29Sys, MosquittoSubReadsTheBrokersStatistics) {
  if (::access(kMosquittoSub.c_str(), X_OK) != 0) GTEST_SKIP() << "mosquitto-clients missing";
  ThreeListeners b("sys_interval_ms = 200\n");
  ASSERT_TRUE(b.broker.ready()) << b.broker.err();
  // The last values at once: every topic, from the broker's first publication on.
  auto r = mosquitto_sub(b.mqtt_port, "$SYS/broker/#", 8);
  ASSERT_TRUE(r.status.clean()) << testing::describe(r.status) << r.out << r.err;
  for (const char* line : {"$SYS/broker/version tickwired version ", "$SYS/broker/uptime ",
                           "$SYS/broker/clients/connected ", "$SYS/broker/messages/received ",
                           "$SYS/broker/messages/sent ", "$SYS/broker/bytes/received ", "$SYS/broker/bytes/sent ",
                           "$SYS/broker/subscriptions/count "}) {
    EXPECT_TRUE(contains(r.out, line)) << line << " in:\n" << r.out;
  }
  EXPECT_TRUE(contains(r.out, " seconds\n")) << r.out;
  // Then an update each interval: the later ones are sampled after this subscriber connected.
  auto connected = mosquitto_sub(b.mqtt_port, "$SYS/broker/clients/connected", 4);
  EXPECT_TRUE(contains(connected.out, "$SYS/broker/clients/connected 1\n")) << connected.out;
  // '#' is not '$SYS/#' (MQTT 4.7.2): a subscriber to everything does not get them.
  // (They come every 200 ms: a second without one is long enough to tell.)
  auto everything = run_to_completion(kMosquittoSub, {"-h", "127.0.0.1", "-p", std::to_string(b.mqtt_port), "-t", "#",
                                                      "-v", "-C", "1", "-W", "1"});
  EXPECT_FALSE(contains(everything.out, "$SYS")) << everything.out;
}

TEST(It29Sys, AdminsAndUsersGrantedSysReadItOthersAreRefused) {
  if (::access(kMosquittoSub.c_str(), X_OK) != 0) GTEST_SKIP() << "mosquitto-clients missing";
  testing::TempDir dir;
  auto user = [](const std::string& name, bool admin, const std::string& pattern) {
    return "[users." + name + "]\npassword = \"" + hash(name + "-pw") + "\"\nadmin = " + (admin ? "true" : "false") +
           "\n[[users." + name + ".rule]]\nallow = [\"subscribe\", \"publish\"]\ntopics = [\"" + pattern + "\"]\n";
  };
  const std::string users = user("ops", true, "OPS/>") + user("mon", false, "$SYS/>") + user("alice", false, ">");
  ThreeListeners b("sys_interval_ms = 200\nauth_file = \"" + dir.write("users.toml", users) +
                   "\"\nauth_failure_delay_ms = 10\n");
  ASSERT_TRUE(b.broker.ready()) << b.broker.err();
  EXPECT_TRUE(contains(mosquitto_sub(b.mqtt_port, "$SYS/broker/uptime", 1, "ops").out, "$SYS/broker/uptime "));
  EXPECT_TRUE(contains(mosquitto_sub(b.mqtt_port, "$SYS/broker/uptime", 1, "mon").out, "$SYS/broker/uptime "));
  // alice's '>' is every topic but the broker's own: as mosquitto's ACL '#'.
  auto alice = b.tickwire({"--user", "alice", "--password-file", dir.write("alice.pw", "alice-pw\n"), "sub",
                           "$SYS/broker/uptime", "-n", "1"});
  EXPECT_NE(alice.status.code, 0) << alice.out;
  EXPECT_TRUE(contains(alice.err, "NOT_AUTHORIZED")) << alice.err;
  // Nobody publishes the broker's figures, not even an admin or a user granted them.
  const std::string mon_pw = dir.write("mon.pw", "mon-pw\n");
  auto spoof = b.tickwire({"--user", "mon", "--password-file", mon_pw, "pub", "$SYS/broker/uptime", "-d", "0"});
  EXPECT_NE(spoof.status.code, 0) << spoof.out;
}

}  // namespace
}  // namespace tw::it
