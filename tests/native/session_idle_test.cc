// NativeSession's idle timeout, in process: a real session on a socketpair,
// ticks driven by hand with chosen clock values.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "base/clock.h"
#include "native/session_harness.h"
#include "tickwire/wire/codec.h"

namespace tw::broker {
namespace {

constexpr uint64_t kMs = 1'000'000;

class SessionIdleTest : public ::testing::Test, protected testing::SessionHarness {
 protected:
  void SetUp() override {
    open(RouterLimits{}, monotonic_ns());
    std::vector<uint8_t> hello(256);
    hello.resize(wire::encode(hello, wire::Hello{1, 1, 0, "idle"}));
    send(hello);
    ASSERT_FALSE(session->closing());
  }
  // The session's idle timeout: the configured one, at least 3 heartbeats.
  uint64_t idle_ns() const {
    return std::max<uint64_t>(config.idle_timeout_ms, 3ull * config.heartbeat_ms) * kMs;
  }
};

TEST_F(SessionIdleTest, ASilentPeerIsClosedAfterTheIdleTimeout) {
  session->on_tick(monotonic_ns() + idle_ns() + 1000 * kMs);
  EXPECT_TRUE(session->closing());
  EXPECT_EQ(counters.idle_timeouts, 1u);
}

TEST_F(SessionIdleTest, APausedConnectionIsNotIdleAndItsClockRestartsOnResume) {
  session->pause_input(true);  // the broker stopped reading: the peer's heartbeats wait in the socket
  session->on_tick(monotonic_ns() + 3 * idle_ns());
  EXPECT_FALSE(session->closing()) << "the silence was the broker's";
  session->pause_input(false);
  session->on_tick(monotonic_ns() + idle_ns() / 2);
  EXPECT_FALSE(session->closing()) << "the idle clock restarted on resume";
  session->on_tick(monotonic_ns() + idle_ns() + 1000 * kMs);
  EXPECT_TRUE(session->closing()) << "and still runs once reading again";
  EXPECT_EQ(counters.idle_timeouts, 1u);
}

// The loop's tick visits a session only when its tick has work: a quiet one
// is due at its next heartbeat or timeout, and any input makes it due at once.
TEST_F(SessionIdleTest, AQuietSessionIsDueOnlyAtItsNextHeartbeatOrTimeout) {
  turn();  // the WELCOME goes out
  const uint64_t now = monotonic_ns();
  session->on_tick(now);
  ASSERT_FALSE(session->closing());
  EXPECT_GT(session->tick_due_ns(), now + 1000 * kMs) << "heartbeat every 5 s, idle timeout 15 s";
  EXPECT_LE(session->tick_due_ns(), now + config.heartbeat_ms * kMs) << "no later than the next heartbeat";
  std::vector<uint8_t> heartbeat(wire::kHeaderSize);
  heartbeat.resize(wire::encode_heartbeat(heartbeat));
  send(heartbeat);
  EXPECT_EQ(session->tick_due_ns(), 0u) << "input: the next tick looks again";
  const uint64_t later = monotonic_ns();
  session::Session::tick_due(loop, later);
  EXPECT_FALSE(session->closing());
  EXPECT_GT(session->tick_due_ns(), later) << "quiet again after that tick";
}

}  // namespace
}  // namespace tw::broker
