// A non-blocking AF_UNIX socket pair for the session tests: the session's
// end and the test's (the peer). `socket_buffer` > 0 shrinks the session's
// send and the peer's receive buffer, so output backs up fast.
#pragma once
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>

namespace tw::session::testing {

struct SocketPair {
  int session = -1;
  int peer = -1;
};

inline SocketPair make_socket_pair(int socket_buffer = 0) {
  int fds[2] = {-1, -1};
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  if (socket_buffer > 0) {
    ::setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &socket_buffer, sizeof socket_buffer);
    ::setsockopt(fds[1], SOL_SOCKET, SO_RCVBUF, &socket_buffer, sizeof socket_buffer);
  }
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  ::fcntl(fds[1], F_SETFL, O_NONBLOCK);
  return {fds[0], fds[1]};
}

}  // namespace tw::session::testing
