// A real NativeSession on one end of a socketpair, with the real router and
// fanout, for the session tests: the test holds the other end (`peer`),
// writes frames into it and drives the turns and ticks by hand, with clock
// values it chooses, so no test depends on how fast it runs.
#pragma once
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "broker/counters.h"
#include "output/fanout.h"
#include "native/native_session.h"
#include "broker/router.h"
#include "config/config.h"
#include "reactor/reactor.h"
#include "session/socket_pair.h"
#include "session/tcp_transport.h"

namespace tw::broker::testing {

struct SessionHarness {
  config::BrokerConfig config;
  reactor::Reactor reactor;
  output::Fanout fanout{1 << 20};
  Counters counters;
  session::LoopState loop{64u << 20};
  std::unique_ptr<Router> router;
  std::unique_ptr<native::NativeSession> session;
  int peer = -1;

  // Opens the session (opened at `opened_ns`); `socket_buffer` > 0 shrinks
  // the session's send and the peer's receive buffer, so output backs up fast.
  void open(const RouterLimits& limits, uint64_t opened_ns, int socket_buffer = 0) {
    const session::testing::SocketPair fds = session::testing::make_socket_pair(socket_buffer);
    ASSERT_GE(fds.peer, 0);
    peer = fds.peer;
    router = std::make_unique<Router>(limits, fanout);
    session = std::make_unique<native::NativeSession>(native::NativeSession::Env{config, reactor, *router, fanout, counters, loop},
                                              std::make_unique<session::TcpTransport>(fds.session), "test", opened_ns);
    ASSERT_TRUE(reactor.add(fds.session, EPOLLIN, session.get()));
  }
  ~SessionHarness() {
    if (session) reactor.remove(session->fd());
    if (peer >= 0) ::close(peer);
  }
  // Writes `bytes` as the peer and lets the session read them.
  void send(const std::vector<uint8_t>& bytes) {
    ASSERT_EQ(::write(peer, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    session->on_io(EPOLLIN);
  }
  // The end of a reactor turn: every queued output is flushed.
  void turn() { fanout.flush_all(); }
};

}  // namespace tw::broker::testing
