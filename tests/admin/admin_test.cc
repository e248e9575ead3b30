// The admin API's handlers, called directly against a real in-process
// broker in each thread shape (no HTTP listener: tests/integration/it24_*
// goes through it). Counts are polled until the loops' next snapshot shows
// them (bounded), never timed.
#include <nlohmann/json.hpp>

#include "admin/api.h"
#include "admin/metrics.h"
#include "admin/process_metrics.h"
#include "tickwire/client/message_format.h"
#include "client/test_broker.h"

namespace tw::admin {
namespace {

using client::testing::confirm_published;
using client::testing::decimal_field;
using client::testing::options_for;
using client::testing::poll_until;
using client::testing::Received;
using client::testing::recorder;
using client::testing::TestBroker;
using Json = nlohmann::json;

struct Shape {
  uint32_t gateways, access_points;
};

http::Request request(std::string method, std::string path, std::string body = {}, bool admin = true) {
  http::Request r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.body = std::move(body);
  r.admin = admin;
  r.peer = "127.0.0.1:1";
  return r;
}

Json json_of(const http::Response& r) { return Json::parse(r.body); }

class AdminApi : public ::testing::TestWithParam<Shape> {
 protected:
  static config::BrokerConfig config() {
    config::BrokerConfig c;
    c.gateways = GetParam().gateways;
    c.access_points = GetParam().access_points;
    c.mqtt_listen = "";
    c.http_listen = "";
    return c;
  }
  TestBroker broker_{config(), 0};
  Api api_{broker_.broker()};

  // The connection named `client` in /api/v1/connections, once `ready` holds for it (bounded polls).
  Json connection(client::Client& poller, const std::string& name, const std::function<bool(const Json&)>& ready) {
    Json found;
    poll_until(poller, [&] {
      const Json all = json_of(api_.connections(request("GET", "/api/v1/connections")));
      for (const Json& c : all["connections"]) {
        if (c["client"] == name && ready(c)) found = c;
      }
      return !found.is_null();
    });
    return found;
  }
};

TEST_P(AdminApi, ConnectionsShowWhatEachConnectionDid) {
  client::Client pub, sub;
  ASSERT_TRUE(pub.connect(options_for(broker_.port(), "pub")).ok());
  ASSERT_TRUE(sub.connect(options_for(broker_.port(), "sub")).ok());
  auto id = pub.advertise("T/EQ/A", wire::PayloadKind::FieldList);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(pub.publish(*id, decimal_field(22, 100, -2), true).ok());
  confirm_published(pub, "T/EQ/A");
  std::vector<Received> got;
  ASSERT_TRUE(sub.subscribe("T/EQ/A", recorder(got)).ok());
  ASSERT_TRUE(sub.subscribe("T/EQ/B", recorder(got)).ok());
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 1; }));
  constexpr int kUpdates = 5;
  for (int i = 0; i < kUpdates; ++i) ASSERT_TRUE(pub.publish(*id, decimal_field(22, 101 + i, -2)).ok());
  ASSERT_TRUE(pub.flush().ok());
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 1 + kUpdates; }));

  const Json s = connection(sub, "sub", [](const Json& c) { return c["msgs_out"] == 1 + kUpdates; });
  ASSERT_FALSE(s.is_null());
  EXPECT_EQ(s["subscriptions"], 2);
  EXPECT_EQ(s["protocol"], "native");
  EXPECT_EQ(s["transport"], "tcp");
  EXPECT_GT(s["bytes_out"].get<uint64_t>(), 0u);
  EXPECT_EQ(s["slow"], false);
  const Json p = connection(pub, "pub", [](const Json& c) { return c["msgs_in"].get<uint64_t>() >= 2 + kUpdates; });
  ASSERT_FALSE(p.is_null());
  EXPECT_EQ(p["subscriptions"], 0);
  EXPECT_GT(p["bytes_in"].get<uint64_t>(), 0u);
}

TEST_P(AdminApi, MetricsCountPublishesAndDeliveries) {
  client::Client pub, sub;
  ASSERT_TRUE(pub.connect(options_for(broker_.port(), "pub")).ok());
  ASSERT_TRUE(sub.connect(options_for(broker_.port(), "sub")).ok());
  auto id = pub.advertise("M/A", wire::PayloadKind::FieldList);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(pub.publish(*id, decimal_field(22, 0, 0), true).ok());
  confirm_published(pub, "M/A");
  std::vector<Received> got;
  ASSERT_TRUE(sub.subscribe("M/>", recorder(got)).ok());
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 1; }));  // the image
  for (int i = 1; i < 4; ++i) ASSERT_TRUE(pub.publish(*id, decimal_field(22, i, 0)).ok());
  ASSERT_TRUE(pub.flush().ok());
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 4; }));
  std::string text;
  ASSERT_TRUE(poll_until(sub, [&] {
    text = api_.metrics(request("GET", "/metrics")).body;
    return text.find("\ntickwire_messages_in_total 4\n") != std::string::npos &&
           text.find("\ntickwire_messages_out_total 3\n") != std::string::npos &&
           text.find("\ntickwire_connections{protocol=\"native\"} 2\n") != std::string::npos;
  })) << text;
  EXPECT_NE(text.find("\ntickwire_connections{protocol=\"mqtt\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ntickwire_build_info{version=\"" TW_VERSION "\"} 1\n"), std::string::npos) << text;
  for (const char* family : {"process_cpu_seconds_total", "process_open_fds", "process_max_fds",
                             "process_virtual_memory_bytes", "process_resident_memory_bytes",
                             "process_start_time_seconds"})
    EXPECT_NE(text.find(std::string("\n") + family + " "), std::string::npos) << family;
  EXPECT_NE(text.find("# TYPE tickwire_messages_out_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("\ntickwire_subscriptions 1\n"), std::string::npos);
  EXPECT_NE(text.find("tickwire_loop_busy_seconds_total{loop="), std::string::npos);
}

TEST_P(AdminApi, RestPublishReachesANativeSubscriber) {
  client::Client sub;
  ASSERT_TRUE(sub.connect(options_for(broker_.port(), "sub")).ok());
  std::vector<Received> got;
  ASSERT_TRUE(sub.subscribe("R/>", recorder(got)).ok());
  http::Request req = request("POST", "/api/v1/publish/R/X", R"({"fields":{"BID":"189.25","ASK":190}})");
  req.headers.emplace_back("content-type", "application/json");
  const http::Response r = api_.publish(req);
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_TRUE(poll_until(sub, [&] { return !got.empty(); }));
  EXPECT_EQ(got[0].topic, "R/X");
  EXPECT_EQ(client::format_payload(wire::PayloadKind::FieldList, got[0].payload, fields::Dictionary::builtin()),
            "BID=189.25 ASK=190");

  http::Request opaque = request("POST", "/api/v1/publish/R/TXT", "hello");
  ASSERT_EQ(api_.publish(opaque).status, 200);
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 2; }));
  EXPECT_EQ(std::string(got[1].payload.begin(), got[1].payload.end()), "hello");

  http::Request bad = request("POST", "/api/v1/publish/R/X", R"({"NO_SUCH_FIELD":1})");
  bad.headers.emplace_back("content-type", "application/json");
  EXPECT_EQ(api_.publish(bad).status, 400);
  EXPECT_EQ(api_.publish(request("POST", "/api/v1/publish/R/X", "opaque now")).status, 409);  // kind mismatch
}

TEST_P(AdminApi, RestSnapshotIsTheClientsImageAsJson) {
  client::Client pub;
  ASSERT_TRUE(pub.connect(options_for(broker_.port(), "pub")).ok());
  auto id = pub.advertise("S/A", wire::PayloadKind::FieldList);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(pub.publish(*id, decimal_field(22, 18925, -2), true).ok());
  ASSERT_TRUE(pub.publish(*id, decimal_field(25, 18930, -2)).ok());
  auto snap = pub.snapshot("S/A", 10'000);
  ASSERT_TRUE(snap.ok() && snap->found);
  client::Message msg;
  msg.kind = client::MessageKind::Image;
  msg.topic = snap->topic;
  msg.channel_id = snap->channel_id;
  msg.seq = snap->seq;
  msg.payload_kind = snap->payload_kind;
  msg.payload = snap->payload;
  const http::Response r = api_.snapshot(request("GET", "/api/v1/snapshot/S/A"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, client::format_json(msg, fields::Dictionary::builtin()) + "\n");
  EXPECT_EQ(api_.snapshot(request("GET", "/api/v1/snapshot/S/NONE")).status, 404);
}

TEST_P(AdminApi, AnAdminClosesAChannelAndDisconnectsAClient) {
  client::Client pub, sub;
  ASSERT_TRUE(pub.connect(options_for(broker_.port(), "pub")).ok());
  auto id = pub.advertise("C/A", wire::PayloadKind::FieldList);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(pub.publish(*id, decimal_field(22, 1, 0), true).ok());
  confirm_published(pub, "C/A");
  client::Options options = options_for(broker_.port(), "sub");
  options.reconnect = false;
  ASSERT_TRUE(sub.connect(options).ok());
  std::vector<Received> got;
  ASSERT_TRUE(sub.subscribe("C/A", recorder(got)).ok());
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 1; }));

  EXPECT_EQ(api_.close_channel(request("DELETE", "/api/v1/channels/C/A", {}, /*admin=*/false)).status, 403);
  const http::Response closed = api_.close_channel(request("DELETE", "/api/v1/channels/C/A"));
  ASSERT_EQ(closed.status, 200) << closed.body;
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 2; }));
  EXPECT_EQ(got[1].kind, client::MessageKind::Status);
  EXPECT_EQ(got[1].state, wire::ChannelState::Closed);
  EXPECT_EQ(got[1].code, wire::Code::ClosedByAdmin);
  EXPECT_EQ(api_.close_channel(request("DELETE", "/api/v1/channels/C/NONE")).status, 404);

  const Json s = connection(sub, "sub", [](const Json&) { return true; });
  ASSERT_FALSE(s.is_null());
  const std::string path = "/api/v1/connections/" + s["id"].get<std::string>();
  EXPECT_EQ(api_.disconnect(request("DELETE", path, {}, /*admin=*/false)).status, 403);
  wire::Code error = wire::Code::Ok;
  sub.on_error([&](const client::ErrorInfo& e) { error = e.code; });
  const http::Response gone = api_.disconnect(request("DELETE", path));
  ASSERT_EQ(gone.status, 200) << gone.body;
  EXPECT_TRUE(poll_until(sub, [&] { return !sub.connected(); }));
  EXPECT_EQ(error, wire::Code::ClosedByAdmin);
  EXPECT_EQ(api_.disconnect(request("DELETE", path)).status, 404);
}

TEST_P(AdminApi, EventsLoopsChannelsAndServices) {
  client::Client pub;
  ASSERT_TRUE(pub.connect(options_for(broker_.port(), "pub")).ok());
  for (const char* topic : {"SVC1/A", "SVC1/B", "SVC2/A"}) {
    auto id = pub.advertise(topic, wire::PayloadKind::FieldList);
    ASSERT_TRUE(id.ok());
    ASSERT_TRUE(pub.publish(*id, decimal_field(22, 1, 0), true).ok());
    confirm_published(pub, topic);
  }
  http::Request channels = request("GET", "/api/v1/channels");
  channels.query = "prefix=SVC1%2F";
  const Json list = json_of(api_.channels(channels))["channels"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["topic"], "SVC1/A");
  EXPECT_EQ(list[1]["topic"], "SVC1/B");
  EXPECT_EQ(list[0]["seq"], 1);
  const Json services = json_of(api_.services(request("GET", "/api/v1/services")))["services"];
  ASSERT_EQ(services.size(), 2u);
  EXPECT_EQ(services[0]["name"], "SVC1");
  EXPECT_EQ(services[0]["channels"], 2);

  const size_t loops = GetParam().gateways + GetParam().access_points;
  EXPECT_EQ(json_of(api_.loops(request("GET", "/api/v1/loops")))["loops"].size(), loops == 0 ? 1 : loops);
  const http::Response events = api_.events(request("GET", "/api/v1/events"));
  ASSERT_TRUE(events.next_event);
  ASSERT_TRUE(events.body.starts_with("data: {"));
  const Json first = Json::parse(events.body.substr(6));
  EXPECT_EQ(first["connections"], 1);
  EXPECT_EQ(first["channels"], 3);
  const Json next = Json::parse(*events.next_event());
  for (const char* key : {"msgs_in_per_s", "msgs_out_per_s", "bytes_in_per_s", "bytes_out_per_s", "slow_consumers"}) {
    EXPECT_TRUE(next.contains(key)) << key;
  }
  EXPECT_EQ(next["loops"].size(), loops == 0 ? 1 : loops);
  EXPECT_EQ(api_.readyz(request("GET", "/readyz")).status, 200);
}

INSTANTIATE_TEST_SUITE_P(Shapes, AdminApi, ::testing::Values(Shape{0, 0}, Shape{1, 1}, Shape{2, 2}),
                         [](const auto& info) {
                           return "threads_" + std::to_string(info.param.gateways) + "_" +
                                  std::to_string(info.param.access_points);
                         });

// /proc/<pid>/stat as proc(5) describes it; the command name may hold spaces and parentheses.
TEST(ProcessMetrics, ParsesProcStatFromTheLastParenthesis) {
  const std::string stat =
      "4242 (tw (a) b) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 150 0 0 20 0 5 0 12345 104857600 2560 "
      "18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 17 1 0 0 0 0 0\n";
  auto s = parse_proc_stat(stat, 1'700'000'000, 100, 4096);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->cpu_seconds, 4.0);                      // (250 + 150) ticks of 10 ms
  EXPECT_DOUBLE_EQ(s->start_time_seconds, 1'700'000'123.45);  // boot + 12345 ticks
  EXPECT_EQ(s->virtual_bytes, 104'857'600u);
  EXPECT_EQ(s->resident_bytes, 2560u * 4096);
  EXPECT_FALSE(parse_proc_stat("4242 (short) S 1 2", 0, 100, 4096));
  EXPECT_FALSE(parse_proc_stat("no name here", 0, 100, 4096));
}

TEST(ProcessMetrics, ThisProcessReadsAsTheClientLibrariesName) {
  auto s = read_process_stats();
  ASSERT_TRUE(s);
  EXPECT_GT(s->resident_bytes, 0u);
  EXPECT_GE(s->virtual_bytes, s->resident_bytes);
  EXPECT_GE(s->open_fds, 3u);  // at least stdin, stdout, stderr
  PromText out;
  write_process_metrics(out, *s);
  EXPECT_NE(out.text().find("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total "),
            std::string::npos)
      << out.text();
  EXPECT_NE(out.text().find("# TYPE process_resident_memory_bytes gauge\n"), std::string::npos) << out.text();
}

TEST(PromText, FamiliesSamplesAndEscapes) {
  PromText out;
  out.family("tickwire_x_total", "counter", "A help\nline with \\ in it.");
  out.sample("tickwire_x_total", uint64_t{7}, {{"loop", "a\"b\\c\nd"}});
  out.sample("tickwire_x_total", 0.25);
  out.sample("tickwire_x_total", 1796193169.41);  // a time since the epoch, to the 10 ms
  EXPECT_EQ(out.text(),
            "# HELP tickwire_x_total A help\\nline with \\\\ in it.\n"
            "# TYPE tickwire_x_total counter\n"
            "tickwire_x_total{loop=\"a\\\"b\\\\c\\nd\"} 7\n"
            "tickwire_x_total 0.25\n"
            "tickwire_x_total 1796193169.41\n");
}

}  // namespace
}  // namespace tw::admin
