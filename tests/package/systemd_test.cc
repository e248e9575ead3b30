// tickwired under systemd (Type=notify, WatchdogSec=): the test plays the
// service manager's side of the sd_notify protocol, a datagram socket named in
// $NOTIFY_SOCKET, and reads what libsystemd sends.
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <string>
#include <vector>

#include "testlib/process.h"

namespace {

using tw::testing::bin_path;
using tw::testing::Process;
using tw::testing::TempDir;

class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : fd_(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, sizeof addr.sun_path - 1);
    bound_ = bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~NotifySocket() { close(fd_); }
  bool bound() const { return bound_; }

  // Waits up to timeout_ms for a datagram containing `text`; everything read is kept in seen().
  bool wait_for(const std::string& text, int timeout_ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd ready{fd_, POLLIN, 0};
      if (poll(&ready, 1, 50) != 1) continue;
      char buf[512];
      ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) continue;
      seen_.emplace_back(buf, static_cast<size_t>(n));
      if (seen_.back().find(text) != std::string::npos) return true;
    }
    return false;
  }
  std::string seen() const {
    std::string all;
    for (const auto& s : seen_) all += s + " | ";
    return all;
  }

 private:
  int fd_;
  bool bound_ = false;
  std::vector<std::string> seen_;
};

TEST(SystemdService, ReadyThenWatchdogPingsThenStopping) {
  TempDir dir;
  NotifySocket manager(dir.file("notify"));
  ASSERT_TRUE(manager.bound());
  setenv("NOTIFY_SOCKET", dir.file("notify").c_str(), 1);
  setenv("WATCHDOG_USEC", "400000", 1);  // pings every 200 ms
  Process broker(bin_path("tickwired"), {"--listen", "127.0.0.1:0", "--log-level", "warn"});
  unsetenv("NOTIFY_SOCKET");
  unsetenv("WATCHDOG_USEC");

  ASSERT_TRUE(manager.wait_for("READY=1", 10000)) << manager.seen() << broker.err();
  ASSERT_TRUE(manager.wait_for("WATCHDOG=1", 5000)) << manager.seen() << broker.err();
  ASSERT_TRUE(manager.wait_for("WATCHDOG=1", 5000)) << "the watchdog keeps pinging while the loops turn: "
                                                     << manager.seen();
  broker.send_signal(SIGTERM);
  EXPECT_TRUE(manager.wait_for("STOPPING=1", 5000)) << manager.seen();
  auto status = broker.wait(10000);
  ASSERT_TRUE(status);
  EXPECT_TRUE(status->clean()) << tw::testing::describe(*status);
}

TEST(SystemdService, WithoutNotifySocketNothingChanges) {
  Process broker(bin_path("tickwired"), {"--listen", "127.0.0.1:0", "--log-level", "info"});
  // Until it serves (its signal handlers are in place by then), however slow a sanitizer makes the start.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (broker.err().find("listening on native") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  broker.send_signal(SIGTERM);
  auto status = broker.wait(10000);
  ASSERT_TRUE(status);
  EXPECT_TRUE(status->clean());
  EXPECT_EQ(broker.err().find("watchdog"), std::string::npos) << broker.err();
}

}  // namespace
