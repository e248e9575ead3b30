// The tickwired executable as a process: the file/flag layering seen from
// outside, the port file, the listen error, a graceful exit on SIGTERM, and
// the loop threads' scheduler slice.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testlib/sched.h"

namespace {

std::string temp_path(const char* stem) {
  return std::string("/tmp/") + stem + "." + std::to_string(getpid()) + "." +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

std::string read_all(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

class Tickwired {
 public:
  explicit Tickwired(std::vector<std::string> args) : stderr_path_(temp_path("tw_stderr")) {
    args.insert(args.begin(), TICKWIRED_PATH);
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    EXPECT_EQ(posix_spawn(&pid_, TICKWIRED_PATH, &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Tickwired() {
    if (!exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    std::remove(stderr_path_.c_str());
  }

  // Waits for the port file; 0 if the process exited first. The deadline only
  // guards against a hang, it measures nothing.
  uint16_t wait_for_port(const std::string& port_file) {
    for (int i = 0; i < 3000; ++i) {
      std::string text = read_all(port_file);
      if (!text.empty()) return static_cast<uint16_t>(std::stoul(text));
      if (has_exited()) return 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return 0;
  }

  int wait_exit() {
    if (!exited_) {
      int status = 0;
      waitpid(pid_, &status, 0);
      record(status);
    }
    return exit_code_;
  }

  void signal(int number) { kill(pid_, number); }
  pid_t pid() const { return pid_; }
  std::string stderr_text() const { return read_all(stderr_path_); }

 private:
  bool has_exited() {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
    record(status);
    return true;
  }
  void record(int status) {
    exited_ = true;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  std::string stderr_path_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_code_ = -1;
};

bool can_connect(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

// A loopback port held open by the test, so tickwired cannot take it.
class BusyPort {
 public:
  // `wanted` 0: any free port. A wanted port another process holds is just as
  // busy, but perhaps not for long (a broker of a test running in parallel):
  // it is taken over once free, for up to 3 s, so that it stays busy here.
  explicit BusyPort(uint16_t wanted = 0) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(wanted);
    bool bound = bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    for (int tries = 0; !bound && wanted != 0 && errno == EADDRINUSE && tries < 150; ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      bound = bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    }
    if (!bound && wanted != 0 && errno == EADDRINUSE) {
      port_ = wanted;
      return;
    }
    EXPECT_EQ(listen(fd_, 1), 0);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~BusyPort() { close(fd_); }
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

TEST(TickwiredProcess, WritesThePortFileServesAndExitsZeroOnSigterm) {
  std::string port_file = temp_path("tw_port");
  Tickwired broker({"--listen", "127.0.0.1:0", "--print-port-file", port_file});
  uint16_t port = broker.wait_for_port(port_file);
  ASSERT_NE(port, 0) << broker.stderr_text();
  EXPECT_TRUE(can_connect(port));
  broker.signal(SIGTERM);
  EXPECT_EQ(broker.wait_exit(), 0) << broker.stderr_text();
  EXPECT_NE(broker.stderr_text().find("listening on native tcp://127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << broker.stderr_text();
  std::remove(port_file.c_str());
}

// The thread of process `pid` named `name`, or 0 once the wait is over (a
// guard against a hang, not a measurement).
pid_t thread_named(pid_t pid, const std::string& name) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (int i = 0; i < 3000; ++i) {
    std::error_code ignored;
    for (const auto& task : std::filesystem::directory_iterator(tasks, ignored)) {
      if (read_all(task.path().string() + "/comm") == name + "\n") return std::stoi(task.path().filename());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

using tw::testing::kernel_has_custom_slices;

// A thread's scheduler slice as sched_getattr reports it, in µs.
uint64_t slice_us_of(pid_t tid) {
  auto slice = tw::testing::slice_ns_of(tid);
  EXPECT_TRUE(slice.has_value());
  return slice.value_or(0) / 1000;
}

TEST(TickwiredProcess, LoopThreadsRunInTheConfiguredSchedulerSlice) {
  std::string port_file = temp_path("tw_port");
  Tickwired broker({"--listen", "127.0.0.1:0", "--print-port-file", port_file, "--threads", "1+1",
                    "--loop-slice-us", "300"});
  ASSERT_NE(broker.wait_for_port(port_file), 0) << broker.stderr_text();
  const pid_t gateway = thread_named(broker.pid(), "tw-gw-0");
  const pid_t access_point = thread_named(broker.pid(), "tw-ap-0");
  ASSERT_NE(gateway, 0);
  ASSERT_NE(access_point, 0);
  const bool custom = kernel_has_custom_slices();
  if (custom) {
    EXPECT_EQ(slice_us_of(gateway), 300u);
    EXPECT_EQ(slice_us_of(access_point), 300u);
    EXPECT_NE(slice_us_of(broker.pid()), 300u);  // the main thread is not a loop thread
  }
  broker.signal(SIGTERM);
  EXPECT_EQ(broker.wait_exit(), 0);
  std::remove(port_file.c_str());
  if (!custom) {
    EXPECT_NE(broker.stderr_text().find("this kernel has no custom scheduler slices"), std::string::npos)
        << broker.stderr_text();
    GTEST_SKIP() << "custom scheduler slices need Linux 6.12";
  }
  EXPECT_NE(broker.stderr_text().find("loop threads run in 300 µs scheduler slices"), std::string::npos)
      << broker.stderr_text();
}

TEST(TickwiredProcess, ListenFlagOverridesTheFile) {
  BusyPort busy;
  std::string config_file = temp_path("tw_config") + ".toml";
  std::ofstream(config_file) << "listen = \"127.0.0.1:" << busy.port() << "\"\n";
  std::string port_file = temp_path("tw_port");
  Tickwired broker({"--config", config_file, "--listen", "127.0.0.1:0", "--print-port-file", port_file});
  uint16_t port = broker.wait_for_port(port_file);
  EXPECT_NE(port, 0) << broker.stderr_text();
  EXPECT_NE(port, busy.port());
  broker.signal(SIGINT);
  EXPECT_EQ(broker.wait_exit(), 0) << broker.stderr_text();
  std::remove(config_file.c_str());
  std::remove(port_file.c_str());
}

TEST(TickwiredProcess, BusyAddressExitsOneWithOneLine) {
  BusyPort busy;
  std::string address = "127.0.0.1:" + std::to_string(busy.port());
  Tickwired broker({"--listen", address});
  EXPECT_EQ(broker.wait_exit(), 1);
  EXPECT_EQ(broker.stderr_text(), "tickwired: cannot listen on " + address + ": Address already in use\n");
}

// The embedded default HTTP listener is optional like the MQTT one: a taken
// port is logged and skipped; an address the user gave must bind.
TEST(TickwiredProcess, ATakenDefaultHttpPortIsSkippedButAGivenOneMustBind) {
  BusyPort default_port(9401);
  std::string port_file = temp_path("tw_port");
  Tickwired broker({"--listen", "127.0.0.1:0", "--mqtt-listen", "", "--print-port-file", port_file});
  ASSERT_NE(broker.wait_for_port(port_file), 0) << broker.stderr_text();
  broker.signal(SIGTERM);
  EXPECT_EQ(broker.wait_exit(), 0) << broker.stderr_text();
  EXPECT_NE(broker.stderr_text().find("default http listener on 127.0.0.1:9401 not started: cannot listen on "
                                      "127.0.0.1:9401: Address already in use (the broker runs without it; "
                                      "http_listen = \"\" skips it)"),
            std::string::npos)
      << broker.stderr_text();
  std::remove(port_file.c_str());

  BusyPort busy;
  std::string address = "127.0.0.1:" + std::to_string(busy.port());
  Tickwired required({"--listen", "127.0.0.1:0", "--mqtt-listen", "", "--http-listen", address});
  EXPECT_EQ(required.wait_exit(), 1);
  EXPECT_EQ(required.stderr_text(), "tickwired: cannot listen on " + address + ": Address already in use\n");
}

TEST(TickwiredProcess, BadConfigurationExitsTwo) {
  std::string config_file = temp_path("tw_config") + ".toml";
  std::ofstream(config_file) << "[limits]\nmax_frame = 8\n";
  Tickwired broker({"--config", config_file});
  EXPECT_EQ(broker.wait_exit(), 2);
  EXPECT_EQ(broker.stderr_text(), "tickwired: " + config_file +
                                      ":2: key 'limits.max_frame': must be between 64 and 1073741824, got 8\n");
  std::remove(config_file.c_str());
}

// Safe defaults (docs/security.md): open access only on loopback unless said so.
TEST(TickwiredProcess, ANonLoopbackListenerNeedsUsersOrAllowAnonymous) {
  Tickwired refused({"--listen", "0.0.0.0:0"});
  EXPECT_EQ(refused.wait_exit(), 1);
  EXPECT_NE(refused.stderr_text().find("listener 0.0.0.0:0 is not on loopback: set auth_file"), std::string::npos)
      << refused.stderr_text();

  std::string config_file = temp_path("tw_config") + ".toml";
  std::ofstream(config_file) << "allow_anonymous = true\n";
  std::string port_file = temp_path("tw_port");
  Tickwired open({"--config", config_file, "--listen", "0.0.0.0:0", "--print-port-file", port_file});
  EXPECT_NE(open.wait_for_port(port_file), 0) << open.stderr_text();
  open.signal(SIGTERM);
  EXPECT_EQ(open.wait_exit(), 0) << open.stderr_text();
  std::remove(config_file.c_str());
  std::remove(port_file.c_str());
}

TEST(TickwiredProcess, ABadUsersFileStopsTheBrokerAtStart) {
  std::string users_file = temp_path("tw_users") + ".toml";
  std::ofstream(users_file) << "[users.alice]\npassword = \"hunter2\"\n";
  std::string config_file = temp_path("tw_config") + ".toml";
  std::ofstream(config_file) << "auth_file = \"" << users_file << "\"\n";
  Tickwired broker({"--config", config_file, "--listen", "127.0.0.1:0"});
  EXPECT_EQ(broker.wait_exit(), 1);
  const std::string err = broker.stderr_text();
  EXPECT_NE(err.find("not an argon2id hash"), std::string::npos) << err;
  EXPECT_EQ(err.find("hunter2"), std::string::npos) << "a secret reached the log: " << err;
  std::remove(users_file.c_str());
  std::remove(config_file.c_str());
}

}  // namespace
