// The tickwired executable as a process: the file/flag layering seen from
// outside, the port file, the listen error, and a graceful exit on SIGTERM.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

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
  BusyPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
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

TEST(TickwiredProcess, BadConfigurationExitsTwo) {
  std::string config_file = temp_path("tw_config") + ".toml";
  std::ofstream(config_file) << "[limits]\nmax_frame = 8\n";
  Tickwired broker({"--config", config_file});
  EXPECT_EQ(broker.wait_exit(), 2);
  EXPECT_EQ(broker.stderr_text(), "tickwired: " + config_file +
                                      ":2: key 'limits.max_frame': must be between 64 and 1073741824, got 8\n");
  std::remove(config_file.c_str());
}

}  // namespace
