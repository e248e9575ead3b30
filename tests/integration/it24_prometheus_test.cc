// IT24 (acceptance): a real Prometheus server (Debian's `prometheus`) scrapes
// the broker's /metrics every second while the test publishes at a known
// rate; `rate(tickwire_messages_in_total[5s])`, asked over Prometheus's HTTP
// API, is within 10 % of it, and `promtool check metrics` accepts the text.
// Prometheus cannot take port 0: the test picks a free port and retries on a
// conflict. It stops Prometheus itself; its files go with the temp dir.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <thread>

#include "admin/http_client.h"
#include "integration/it_support.h"

namespace tw::it {
namespace {

using Json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;
using testing::Process;

bool installed(const char* path) { return ::access(path, X_OK) == 0; }

std::string prometheus_config(uint16_t broker_http_port) {
  return "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
         "scrape_configs:\n  - job_name: tickwire\n    scrape_interval: 1s\n    static_configs:\n"
         "      - targets: ['127.0.0.1:" +
         std::to_string(broker_http_port) + "']\n";
}

// A running Prometheus, or null after three ports that were taken (or another failure).
std::unique_ptr<Process> start_prometheus(const testing::TempDir& dir, const std::string& config, uint16_t& port) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    port = testing::pick_free_port();
    auto p = std::make_unique<Process>(
        "/usr/bin/prometheus",
        std::vector<std::string>{"--config.file=" + config, "--storage.tsdb.path=" + dir.file("data"),
                                 "--web.listen-address=127.0.0.1:" + std::to_string(port), "--log.level=warn"});
    admin::HttpTarget t;
    t.port = port;
    t.timeout_ms = 1'000;
    for (int i = 0; i < 200 && p->alive(); ++i) {
      auto ready = admin::http_request(t, "GET", "/-/ready");
      if (ready && ready->status == 200) return p;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    p->stop(5'000);  // exited (the port was taken in the meantime) or never ready: try another port
  }
  return nullptr;
}

TEST(Prometheus, ScrapesThePublishRateWithinTenPercent) {
  if (!installed("/usr/bin/prometheus") || !installed("/usr/bin/promtool")) {
    GTEST_SKIP() << "prometheus and promtool are not installed (scripts/deps.sh installs them)";
  }
  BrokerProcess broker(BrokerOptions{.args = {"--http-listen", "127.0.0.1:0"}});
  ASSERT_TRUE(broker.ready()) << broker.err();
  testing::TempDir dir;
  uint16_t port = 0;
  auto prometheus = start_prometheus(dir, dir.write("prometheus.yml", prometheus_config(broker.http_port())), port);
  ASSERT_TRUE(prometheus) << "prometheus did not start";

  // Publishing starts once Prometheus has scraped the broker (a freshly started server takes a moment).
  admin::HttpTarget t;
  t.port = port;
  bool scraped = false;
  for (int i = 0; i < 100 && !scraped; ++i) {
    auto up = admin::http_request(t, "GET", "/api/v1/query?query=up%7Bjob%3D%22tickwire%22%7D");
    scraped = up && up->status == 200 && up->body.find("\"1\"]") != std::string::npos;
    if (!scraped) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(scraped) << "prometheus never scraped the broker";

  // 400 messages a second for 7 s, each at its own time from the start (no drift).
  RawClient pub;
  ASSERT_TRUE(open_client(pub, broker.port(), "it24-prom-pub"));
  ASSERT_TRUE(pub.register_topic(1, wire::PayloadKind::FieldList, "PROM/A"));
  constexpr int kRate = 400;
  constexpr int kSeconds = 7;
  const auto start = SteadyClock::now();
  for (int i = 0; i < kRate * kSeconds; ++i) {
    std::this_thread::sleep_until(start + std::chrono::microseconds(1'000'000LL * i / kRate));
    ASSERT_TRUE(pub.publish(1, int_payload(i)));
  }
  const double end_unix = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::this_thread::sleep_for(std::chrono::milliseconds(1'500));  // the last scrapes land

  // The rate over the last 5 s of publishing, ending half a second before it stopped.
  char query[256];
  std::snprintf(query, sizeof query, "/api/v1/query?query=rate(tickwire_messages_in_total%%5B5s%%5D)&time=%.3f",
                end_unix - 0.5);
  auto reply = admin::http_request(t, "GET", query);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  ASSERT_EQ(reply->status, 200) << reply->body;
  const Json answer = Json::parse(reply->body);
  ASSERT_EQ(answer["data"]["result"].size(), 1u) << reply->body;
  const double measured = std::stod(answer["data"]["result"][0]["value"][1].get<std::string>());
  EXPECT_NEAR(measured, kRate, kRate * 0.10) << reply->body;
  std::printf("prometheus: rate(tickwire_messages_in_total[5s]) = %.1f msg/s, published %d msg/s\n", measured, kRate);

  // promtool reads the broker's /metrics as Prometheus does.
  admin::HttpTarget b;
  b.port = broker.http_port();
  auto metrics = admin::http_request(b, "GET", "/metrics");
  ASSERT_TRUE(metrics.ok() && metrics->status == 200);
  const std::string file = dir.write("metrics.txt", metrics->body);
  auto check = testing::run_to_completion("/bin/sh", {"-c", "/usr/bin/promtool check metrics < '" + file + "'"});
  EXPECT_TRUE(check.status.clean()) << check.out << check.err;
  EXPECT_EQ(check.out + check.err, "") << "promtool has remarks";

  prometheus->stop(5'000);
}

}  // namespace
}  // namespace tw::it
