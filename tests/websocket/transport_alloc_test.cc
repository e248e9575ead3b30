// The hot path over WebSocket allocates nothing per message: framing
// outbound MQTT bytes (the header from the transport's own bytes, the
// iovecs on the stack) and reading inbound binary frames (unmasked in the
// caller's buffer) cost no allocation.
// Counted with a replaced global operator new (this test binary only).
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "session/tcp_transport.h"
#include "websocket/transport.h"

namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace

void* operator new(size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace tw::websocket {
namespace {

TEST(WebSocketHotPath, FramingAndReadingAllocateNothingPerMessage) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  Transport server(std::make_unique<session::TcpTransport>(fds[0]), Settings{Framing::BinaryStream, 1u << 20});
  const uint8_t mask[4] = {9, 8, 7, 6};
  const std::string inbound = encode_frame(Opcode::Binary, std::string(100, 'i'), true, mask);
  char publish[64] = "0\x3e\x00\x08it23/hot payload of one MQTT PUBLISH";
  char second[16] = "second packet";
  iovec iov[2] = {{publish, sizeof publish}, {second, sizeof second}};
  char sink[65536];
  uint8_t read_buffer[4096];

  ASSERT_EQ(server.writev(iov, 2), ssize_t(sizeof publish + sizeof second));  // warm-up
  while (::read(fds[1], sink, sizeof sink) > 0) {
  }
  const uint64_t before = g_allocations.load();
  for (int message = 0; message < 1000; ++message) {
    ASSERT_EQ(server.writev(iov, 2), ssize_t(sizeof publish + sizeof second));
    ASSERT_GT(::read(fds[1], sink, sizeof sink), 0);
    ASSERT_EQ(::write(fds[1], inbound.data(), inbound.size()), ssize_t(inbound.size()));
    session::ReadResult r = server.read({read_buffer, sizeof read_buffer});
    ASSERT_EQ(r.status, session::ReadStatus::Data);
    ASSERT_EQ(r.bytes, 100u);
  }
  EXPECT_EQ(g_allocations.load() - before, 0u);
  ::close(fds[1]);
}

}  // namespace
}  // namespace tw::websocket
