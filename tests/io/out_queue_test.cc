// OutQueue over a real socketpair: order across refs, copies and partial
// writes, and survival of queued bytes after the arena is overwritten.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "io/out_queue.h"
#include "output/arena.h"

namespace tw::io {
namespace {

struct SocketPair {
  SocketPair() {
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    int small = 4096;
    ::setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
  }
  ~SocketPair() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  std::vector<uint8_t> drain() {
    std::vector<uint8_t> out;
    uint8_t buf[65536];
    for (;;) {
      ssize_t n = ::read(fds[1], buf, sizeof buf);
      if (n <= 0) break;
      out.insert(out.end(), buf, buf + n);
    }
    return out;
  }
  int fds[2];
};

std::span<const uint8_t> put(output::FrameArena& arena, uint8_t first, size_t n) {
  auto space = arena.reserve(n);
  for (size_t i = 0; i < n; ++i) space[i] = static_cast<uint8_t>(first + i);
  return arena.commit(n);
}

TEST(OutQueue, AdjacentRefsCoalesceIntoOneWrite) {
  SocketPair sp;
  output::FrameArena arena(1024);
  OutQueue q;
  FdWriter writer(sp.fds[0]);
  q.append_ref(put(arena, 0, 10));
  q.append_ref(put(arena, 10, 10));
  q.append_ref(put(arena, 20, 10));
  EXPECT_EQ(q.queued_bytes(), 30u);
  EXPECT_EQ(q.flush(writer), FlushResult::Done);
  EXPECT_EQ(q.write_calls(), 1u);
  auto got = sp.drain();
  std::vector<uint8_t> want(30);
  std::iota(want.begin(), want.end(), 0);
  EXPECT_EQ(got, want);
}

TEST(OutQueue, UnsentBytesSurviveArenaResetInOrder) {
  SocketPair sp;
  output::FrameArena arena(1 << 20);
  OutQueue q;
  FdWriter writer(sp.fds[0]);
  std::vector<uint8_t> expected;
  for (int i = 0; i < 200; ++i) {
    auto frame = put(arena, static_cast<uint8_t>(i), 1000);
    expected.insert(expected.end(), frame.begin(), frame.end());
    q.append_ref(frame);
    if (i % 3 == 0) {
      uint8_t copy[5] = {1, 2, 3, 4, static_cast<uint8_t>(i)};
      q.append_copy(copy);
      expected.insert(expected.end(), copy, copy + 5);
    }
  }
  // The socket takes only part; the rest must be copied out of the arena.
  EXPECT_EQ(q.flush(writer), FlushResult::Pending);
  std::memset(arena.reserve(arena.capacity() - arena.used()).data(), 0xEE, arena.capacity() - arena.used());
  arena.reset();
  std::memset(arena.reserve(arena.capacity()).data(), 0xEE, arena.capacity());
  std::vector<uint8_t> got;
  for (int spins = 0; spins < 10000 && !q.empty(); ++spins) {
    auto part = sp.drain();
    got.insert(got.end(), part.begin(), part.end());
    (void)q.flush(writer);
  }
  auto rest = sp.drain();
  got.insert(got.end(), rest.begin(), rest.end());
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(got, expected);
}

TEST(OutQueue, ClosedPeerIsAnError) {
  SocketPair sp;
  ::close(sp.fds[1]);
  sp.fds[1] = ::dup(sp.fds[0]);  // keep the destructor's close harmless
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  ::close(fds[1]);
  OutQueue q;
  FdWriter writer(fds[0]);
  uint8_t data[4] = {1, 2, 3, 4};
  q.append_copy(data);
  signal(SIGPIPE, SIG_IGN);
  EXPECT_EQ(q.flush(writer), FlushResult::Error);
  ::close(fds[0]);
}

}  // namespace
}  // namespace tw::io
