// Process lifecycle: graceful shutdown on SIGTERM/SIGINT, and start-up
// failures that must exit non-zero with a useful message.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cctype>

#include "integration/it_support.h"

namespace tw::it {
namespace {

using testing::bin_path;
using testing::run_to_completion;

constexpr int kSafetyTimeoutMs = 5000;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}
size_t line_count(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

class Shutdown : public ::testing::TestWithParam<int> {};

TEST_P(Shutdown, ClientsGetServerShutdownAndTheProcessExitsZero) {
  BrokerProcess broker;
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient pub;
  RawClient sub;
  RawClient bare;  // connected, no HELLO yet
  std::string why;
  ASSERT_TRUE(open_client(pub, broker.port(), "pub", &why)) << why;
  ASSERT_TRUE(open_client(sub, broker.port(), "sub", &why)) << why;
  ASSERT_TRUE(bare.connect(broker.port()));
  ASSERT_TRUE(pub.register_topic(1, wire::PayloadKind::FieldList, "LIFE/T"));
  ASSERT_TRUE(sub.subscribe(1, "LIFE/>"));
  StreamModel model;
  ASSERT_TRUE(pass_fence(pub, 1, sub, model, "LIFE/T"));

  broker.send_signal(GetParam());
  for (RawClient* c : {&pub, &sub}) {
    auto code = c->wait_closed_with(kSafetyTimeoutMs);
    ASSERT_TRUE(code) << "connection not closed on shutdown";
    EXPECT_EQ(*code, wire::Code::ServerShutdown);
  }
  EXPECT_TRUE(bare.wait_closed(kSafetyTimeoutMs));
  auto status = broker.wait(kSafetyTimeoutMs);
  ASSERT_TRUE(status) << "the broker did not exit after the signal";
  EXPECT_TRUE(status->clean()) << testing::describe(*status) << "\n" << broker.err();
}

INSTANTIATE_TEST_SUITE_P(It07Lifecycle, Shutdown, ::testing::Values(SIGTERM, SIGINT),
                         [](const auto& info) { return info.param == SIGTERM ? "SIGTERM" : "SIGINT"; });

TEST(It07Lifecycle, PortInUseExitsNonZeroWithOneLineError) {
  BrokerProcess first;
  ASSERT_TRUE(first.ready()) << first.err();
  testing::TempDir dir;
  auto r = run_to_completion(bin_path("tickwired"),
                             {"--listen", "127.0.0.1:" + std::to_string(first.port()), "--print-port-file",
                              dir.file("port"), "--log-level", "warn"});
  ASSERT_FALSE(r.timed_out) << "the second broker kept running on a busy port";
  EXPECT_TRUE(r.status.exited);
  EXPECT_NE(r.status.code, 0);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(std::to_string(first.port())), std::string::npos) << r.err;
  EXPECT_TRUE(first.alive());
}

TEST(It07Lifecycle, BadConfigValueNamesFileLineAndKey) {
  testing::TempDir dir;
  std::string path = dir.write("bad.toml", "# a comment\nserver_name = \"ok\"\nheartbeat_ms = \"often\"\n");
  auto r = run_to_completion(bin_path("tickwired"), {"--config", path, "--listen", "127.0.0.1:0"});
  ASSERT_FALSE(r.timed_out);
  EXPECT_TRUE(r.status.exited);
  EXPECT_NE(r.status.code, 0);
  EXPECT_NE(r.err.find(path + ":3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("heartbeat_ms"), std::string::npos) << r.err;
}

TEST(It07Lifecycle, UnknownConfigKeyIsRefused) {
  testing::TempDir dir;
  std::string path = dir.write("bad.toml", "heartbeat_ms = 1000\nno_such_key = 5\n");
  auto r = run_to_completion(bin_path("tickwired"), {"--config", path, "--listen", "127.0.0.1:0"});
  ASSERT_FALSE(r.timed_out);
  EXPECT_NE(r.status.code, 0);
  EXPECT_NE(r.err.find(path + ":2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no_such_key"), std::string::npos) << r.err;
}

TEST(It07Lifecycle, MissingConfigFileIsRefused) {
  auto r = run_to_completion(bin_path("tickwired"), {"--config", "/nonexistent/tw.toml", "--listen", "127.0.0.1:0"});
  ASSERT_FALSE(r.timed_out);
  EXPECT_NE(r.status.code, 0);
  EXPECT_NE(r.err.find("/nonexistent/tw.toml"), std::string::npos) << r.err;
}

TEST(It07Lifecycle, UnknownFlagPrintsUsage) {
  auto r = run_to_completion(bin_path("tickwired"), {"--bogus"});
  ASSERT_FALSE(r.timed_out);
  EXPECT_TRUE(r.status.exited);
  EXPECT_NE(r.status.code, 0);
  EXPECT_NE(r.err.find("--bogus"), std::string::npos) << r.err;
  EXPECT_NE(lower(r.err).find("usage"), std::string::npos) << r.err;
}

TEST(It07Lifecycle, HelpExitsZero) {
  auto r = run_to_completion(bin_path("tickwired"), {"--help"});
  ASSERT_FALSE(r.timed_out);
  EXPECT_TRUE(r.status.clean());
  EXPECT_NE(r.out.find("--listen"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tw::it
