// NativeSession's idle timeout, in process: a real session on a socketpair,
// ticks driven by hand with chosen clock values.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "base/clock.h"
#include "broker/counters.h"
#include "broker/fanout.h"
#include "broker/native_session.h"
#include "broker/router.h"
#include "config/config.h"
#include "reactor/reactor.h"
#include "wire/codec.h"

namespace tw::broker {
namespace {

constexpr uint64_t kMs = 1'000'000;

class SessionIdleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    peer = fds[1];
    router = std::make_unique<Router>(RouterLimits{}, fanout);
    session = std::make_unique<NativeSession>(NativeSession::Env{config, reactor, *router, fanout, counters}, fds[0],
                                              "test", monotonic_ns());
    ASSERT_TRUE(reactor.add(fds[0], EPOLLIN, session.get()));
    std::vector<uint8_t> hello(256);
    hello.resize(wire::encode(hello, wire::Hello{1, 1, 0, "idle"}));
    ASSERT_EQ(::write(peer, hello.data(), hello.size()), static_cast<ssize_t>(hello.size()));
    session->on_io(EPOLLIN);
    ASSERT_FALSE(session->closing());
  }
  void TearDown() override {
    reactor.remove(session->fd());
    ::close(peer);
  }
  // The session's idle timeout: the configured one, at least 3 heartbeats.
  uint64_t idle_ns() const {
    return std::max<uint64_t>(config.idle_timeout_ms, 3ull * config.heartbeat_ms) * kMs;
  }

  config::BrokerConfig config;
  reactor::Reactor reactor;
  Fanout fanout{1 << 20};
  Counters counters;
  std::unique_ptr<Router> router;
  std::unique_ptr<NativeSession> session;
  int peer = -1;
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

}  // namespace
}  // namespace tw::broker
