#include "testlib/broker_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace tw::testing {

namespace {
constexpr int kPortFileTimeoutMs = 10'000;
}

BrokerProcess::BrokerProcess(BrokerOptions options) : port_file_(dir_.file("port")) {
  raise_fd_limit();  // the broker inherits it: fan-out tests need > 1024 sockets
  std::vector<std::string> args = {"--listen", options.host + ":" + std::to_string(options.port),
                                   "--print-port-file", port_file_, "--log-level", options.log_level};
  if (!options.config_toml.empty()) {
    args.push_back("--config");
    args.push_back(dir_.write("broker.toml", options.config_toml));
  }
  if (!options.slow_consumer_policy.empty()) {
    args.push_back("--slow-consumer-policy");
    args.push_back(options.slow_consumer_policy);
  }
  // The whole process-level suite runs once per thread configuration (tests/integration/CMakeLists.txt).
  if (const char* threads = std::getenv("TW_TEST_THREADS"); threads != nullptr && *threads != '\0') {
    args.push_back("--threads");
    args.push_back(threads);
  }
  // Test brokers leave the default MQTT and HTTP ports alone unless a test asks for them.
  if (std::find(options.args.begin(), options.args.end(), "--mqtt-listen") == options.args.end() &&
      options.config_toml.find("mqtt_listen") == std::string::npos) {
    args.push_back("--mqtt-listen");
    args.push_back("");
  }
  if (std::find(options.args.begin(), options.args.end(), "--http-listen") == options.args.end() &&
      options.config_toml.find("http_listen") == std::string::npos) {
    args.push_back("--http-listen");
    args.push_back("");
  }
  // Nor publish $SYS topics, which would show in their listings and counts, unless a test asks for them.
  if (std::find(options.args.begin(), options.args.end(), "--sys-interval-ms") == options.args.end() &&
      options.config_toml.find("sys_interval_ms") == std::string::npos) {
    args.push_back("--sys-interval-ms");
    args.push_back("0");
  }
  args.insert(args.end(), options.args.begin(), options.args.end());
  std::string program = bin_path("tickwired");
  if (options.file_limit != 0) {
    const std::string limit = std::to_string(options.file_limit);
    args.insert(args.begin(), {"--nofile=" + limit + ":" + limit, "--", program});
    program = "/usr/bin/prlimit";
  }
  if (!options.command_prefix.empty()) {
    args.insert(args.begin(), program);
    args.insert(args.begin(), options.command_prefix.begin() + 1, options.command_prefix.end());
    program = options.command_prefix.front();
  }
  process_ = std::make_unique<Process>(program, args);
  if (process_->started()) port_ = wait_for_port_file(kPortFileTimeoutMs);
}

BrokerProcess::~BrokerProcess() { process_->stop(5000); }

// The broker writes the file under a temporary name and renames it, so a
// file that exists holds the whole number.
uint16_t BrokerProcess::wait_for_port_file(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(port_file_);
    unsigned port = 0;
    if (in >> port && port > 0 && port < 65536) return static_cast<uint16_t>(port);
    if (!process_->alive()) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return 0;
}

uint16_t BrokerProcess::http_port() const {
  std::ifstream in(port_file_);
  unsigned native = 0, http = 0;
  if (!(in >> native >> http) || http >= 65536) return 0;
  return static_cast<uint16_t>(http);
}

uint16_t pick_free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

}  // namespace tw::testing
