#include "perf/run/broker.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

namespace tw::perf::run {

namespace {

constexpr int kStartTimeoutMs = 10'000;

// The port tickwired wrote, once the file holds a whole number.
int read_port_file(const std::string& path) {
  std::ifstream in(path);
  int port = 0;
  if (in >> port) return port;
  return 0;
}

}  // namespace

std::string substitute_port(const std::string& command, int port) {
  std::string out = command;
  const std::string token = "{port}";
  for (size_t at; (at = out.find(token)) != std::string::npos;) out.replace(at, token.size(), std::to_string(port));
  return out;
}

Result<StartedBroker> start_tickwired(const std::string& tickwired, const std::string& dir) {
  std::string port_file = dir + "/tickwired.port";
  std::remove(port_file.c_str());
  ChildSpec spec{{tickwired, "--listen", "127.0.0.1:0", "--print-port-file", port_file, "--log-level", "warn"},
                 dir + "/broker.log", false};
  auto child = Child::spawn(spec);
  if (!child) return child.error();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kStartTimeoutMs);
  while (std::chrono::steady_clock::now() < deadline) {
    if (int port = read_port_file(port_file); port > 0)
      return StartedBroker{std::move(*child), "127.0.0.1:" + std::to_string(port)};
    if (child->try_reap()) return Error{"tickwired exited at start; see " + dir + "/broker.log"};
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Error{"tickwired did not write its port within 10 s; see " + dir + "/broker.log"};
}

Result<StartedBroker> start_broker_command(const std::string& command, const std::string& dir) {
  auto port = pick_free_port();
  if (!port) return port.error();
  // exec: the shell becomes the broker, so the child's pid is the broker's (for its CPU time).
  ChildSpec spec{{"/bin/sh", "-c", "exec " + substitute_port(command, *port)}, dir + "/broker.log", false};
  auto child = Child::spawn(spec);
  if (!child) return child.error();
  if (!wait_for_port(*port, kStartTimeoutMs)) {
    child->terminate(500);
    return Error{"broker command did not accept connections on port " + std::to_string(*port) + "; see " + dir +
                 "/broker.log"};
  }
  return StartedBroker{std::move(*child), "127.0.0.1:" + std::to_string(*port)};
}

}  // namespace tw::perf::run
