// `tickwire perf pub/sub` over MQTT (mosquitto) and NATS (nats-server), when
// those servers are installed; skipped otherwise.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "perf/perf_process_support.h"
#include "testlib/broker_process.h"
#include "testlib/process.h"

namespace tw::perf::testing {
namespace {

using tw::testing::bin_path;
using tw::testing::pick_free_port;
using tw::testing::Process;
using tw::testing::TempDir;

std::string find_program(const std::vector<std::string>& candidates) {
  for (const auto& path : candidates)
    if (access(path.c_str(), X_OK) == 0) return path;
  return "";
}

bool accepts_connections(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

bool wait_listening(uint16_t port, Process& server) {
  for (int i = 0; i < 200 && server.alive(); ++i) {
    if (accepts_connections(port)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return false;
}

// Subscriber first, then a publisher; the subscriber process hosts two
// connections (they wait together on the transport's wait_fd()), and each
// must see every message.
void expect_round_trip(const std::string& transport, uint16_t port) {
  Process sub(bin_path("tickwire"), perf_args("sub", port, {"PERF/>", "--transport", transport, "--json",
                                                            "--connections", "2", "--idle-exit-ms", "800",
                                                            "--wait-ms", "20000"}));
  ASSERT_TRUE(sub.wait_for_out("\"ready\"}\n{\"role\":\"sub\",\"type\":\"ready\"}", 10000)) << sub.err();
  auto pub = tw::testing::run_to_completion(
      bin_path("tickwire"),
      perf_args("pub", port, {"--transport", transport, "--topics", "3", "--rate", "2000", "--count", "1500",
                              "--size", "100", "--probe-rate", "50", "--json"}),
      30000);
  ASSERT_TRUE(pub.status.clean()) << pub.err;
  auto pub_line = nlohmann::json::parse(pub.out);
  uint64_t total = pub_line["sent"].get<uint64_t>();
  EXPECT_EQ(total, 1500 + pub_line["probes_sent"].get<uint64_t>());

  auto exit = sub.wait(20000);
  ASSERT_TRUE(exit && exit->clean()) << sub.err();
  auto lines = json_lines(sub.out());
  ASSERT_EQ(count_of_type(lines, "summary"), 2u) << sub.out();
  for (const auto& summary : lines) {
    if (summary.value("type", "") != "summary") continue;
    EXPECT_EQ(summary["received"], total);
    EXPECT_EQ(summary["gaps"], 0);
    EXPECT_EQ(summary["missing"], 0);
    EXPECT_EQ(summary["dups"], 0);
    EXPECT_EQ(summary["late_joins"], 0);
  }
}

TEST(PerfOtherBrokers, MqttRoundTripThroughMosquitto) {
  std::string mosquitto = find_program({"/usr/sbin/mosquitto", "/usr/bin/mosquitto"});
  if (mosquitto.empty()) GTEST_SKIP() << "mosquitto is not installed (apt-get install mosquitto)";
  TempDir dir;
  uint16_t port = pick_free_port();
  std::string config = dir.write("mosquitto.conf", "listener " + std::to_string(port) +
                                                       " 127.0.0.1\nallow_anonymous true\npersistence false\n");
  Process server(mosquitto, {"-c", config});
  ASSERT_TRUE(wait_listening(port, server)) << server.err();
  expect_round_trip("mqtt", port);
  expect_round_trip("mqtt-raw", port);
}

TEST(PerfOtherBrokers, NatsRoundTripThroughNatsServer) {
  std::string nats = find_program({"/usr/bin/nats-server", "/usr/sbin/nats-server"});
  if (nats.empty()) GTEST_SKIP() << "nats-server is not installed (apt-get install nats-server)";
  uint16_t port = pick_free_port();
  Process server(nats, {"-a", "127.0.0.1", "-p", std::to_string(port)});
  ASSERT_TRUE(wait_listening(port, server)) << server.err();
  expect_round_trip("nats", port);
  expect_round_trip("nats-raw", port);
}

}  // namespace
}  // namespace tw::perf::testing
