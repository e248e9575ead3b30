// A tickwired broker run as a real child process for black-box tests.
//
// The constructor starts `[command_prefix] <bin_dir>/tickwired --listen HOST:PORT
// --print-port-file <tmp>/port [--threads $TW_TEST_THREADS] <extra args>`
// (through `prlimit --nofile=N:N` with BrokerOptions::file_limit)
// (PORT 0 unless a fixed port is given) and waits up to 10 s for the port file; ready() says whether the
// broker is listening. The destructor always stops it (SIGTERM, then SIGKILL).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "testlib/process.h"

namespace tw::testing {

struct BrokerOptions {
  std::vector<std::string> args;  // extra flags, e.g. {"--max-frame", "4096"}
  uint16_t port = 0;              // 0 = any free port
  std::string config_toml;        // when not empty: written to a file and passed as --config
  std::string log_level = "warn";
  // --slow-consumer-policy for the broker; "" = none, the broker's own default
  // (conflate). "disconnect" by default here: the tests written before the
  // policies existed expect a slow consumer to be disconnected.
  std::string slow_consumer_policy;  // "" = the broker's default (conflate)
  // When not 0: the broker runs with this many file descriptors, soft and
  // hard limit alike (through util-linux's prlimit), so it cannot raise it.
  unsigned file_limit = 0;
  // The address its native listener binds (port as above).
  std::string host = "127.0.0.1";
  // Run through another program, e.g. {"/usr/sbin/ip", "netns", "exec", "NS"}
  // (it must exec tickwired, so that pid() and signals reach the broker).
  std::vector<std::string> command_prefix;
};

class BrokerProcess {
 public:
  BrokerProcess() : BrokerProcess(BrokerOptions{}) {}
  explicit BrokerProcess(BrokerOptions options);
  ~BrokerProcess();
  BrokerProcess(const BrokerProcess&) = delete;
  BrokerProcess& operator=(const BrokerProcess&) = delete;

  // True once the port file appeared; false when the broker died or timed out.
  bool ready() const { return port_ != 0; }
  uint16_t port() const { return port_; }
  // The HTTP listener's bound port (the port file's second line), 0 when it has none.
  uint16_t http_port() const;
  bool alive() { return process_->alive(); }
  pid_t pid() const { return process_->pid(); }
  void send_signal(int sig) { process_->send_signal(sig); }
  std::optional<ExitStatus> wait(int timeout_ms) { return process_->wait(timeout_ms); }
  // SIGTERM, wait up to timeout_ms, then SIGKILL.
  ExitStatus stop(int timeout_ms = 5000) { return process_->stop(timeout_ms); }
  std::optional<ExitStatus> exit_status() const { return process_->exit_status(); }
  std::string err() const { return process_->err(); }
  const TempDir& dir() const { return dir_; }

 private:
  uint16_t wait_for_port_file(int timeout_ms);

  TempDir dir_;
  std::string port_file_;
  std::unique_ptr<Process> process_;
  uint16_t port_ = 0;
};

// A TCP port that was free a moment ago (bound to port 0, then released).
uint16_t pick_free_port();

}  // namespace tw::testing
