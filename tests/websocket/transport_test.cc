// websocket::Transport over a socketpair: what a session reads and writes,
// and what the peer sees on the wire.
#include "websocket/transport.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "session/tcp_transport.h"

namespace tw::websocket {
namespace {

const uint8_t kMask[4] = {1, 2, 3, 4};

struct Pair {
  Pair(Framing framing, std::string early = {}, int sndbuf = 0) {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    if (sndbuf > 0) ::setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    client = fds[1];
    server = std::make_unique<Transport>(std::make_unique<session::TcpTransport>(fds[0]),
                                         Settings{framing, 1u << 20}, std::move(early));
  }
  ~Pair() { ::close(client); }
  void send(std::string_view bytes) { ASSERT_EQ(::write(client, bytes.data(), bytes.size()), ssize_t(bytes.size())); }
  std::string received() {
    std::string out;
    char buf[65536];
    ssize_t n;
    while ((n = ::read(client, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    return out;
  }
  std::string read_server(session::ReadStatus* status = nullptr) {
    uint8_t buf[4096];
    std::string out;
    for (;;) {
      session::ReadResult r = server->read({buf, sizeof buf});
      if (status) *status = r.status;
      if (r.status != session::ReadStatus::Data) return out;
      out.append(reinterpret_cast<char*>(buf), r.bytes);
    }
  }
  int client;
  std::unique_ptr<Transport> server;
};

// The server's frames as the client reads them.
std::vector<std::pair<Reader::Kind, std::string>> frames_of(std::string wire) {
  Reader reader({Role::Client, 1u << 30});
  std::vector<std::pair<Reader::Kind, std::string>> out;
  std::vector<uint8_t> bytes(wire.begin(), wire.end());
  size_t pos = 0;
  std::string data;
  while (pos < bytes.size()) {
    Reader::Step s = reader.next({bytes.data() + pos, bytes.size() - pos});
    pos += s.consumed;
    if (s.kind == Reader::Kind::NeedMore && s.consumed == 0) break;
    std::string payload(reinterpret_cast<const char*>(s.payload.data()), s.payload.size());
    if (s.kind == Reader::Kind::Data) {
      data += payload;
      if (s.message_end) out.emplace_back(s.kind, std::exchange(data, {}));
    } else if (s.kind != Reader::Kind::NeedMore) {
      out.emplace_back(s.kind, payload);
      if (s.kind == Reader::Kind::Close || s.kind == Reader::Kind::Error) break;
    }
  }
  return out;
}

TEST(WebSocketTransport, BinaryMessagesReadAsOneStreamIncludingEarlyInput) {
  Pair p(Framing::BinaryStream, encode_frame(Opcode::Binary, "ab", true, kMask));
  EXPECT_GT(p.server->pending_input(), 0u);
  p.send(encode_frame(Opcode::Binary, "cd", false, kMask) + encode_frame(Opcode::Continuation, "ef", true, kMask));
  EXPECT_EQ(p.read_server(), "abcdef");
}

TEST(WebSocketTransport, EachWriteIsOneUnmaskedBinaryFrame) {
  Pair p(Framing::BinaryStream);
  std::string a = "hello ", b = "world";
  iovec iov[2] = {{a.data(), a.size()}, {b.data(), b.size()}};
  EXPECT_EQ(p.server->writev(iov, 2), 11);
  EXPECT_EQ(p.received(), encode_frame(Opcode::Binary, "hello world"));
}

TEST(WebSocketTransport, PartialWritesFinishTheFrameTheyBegan) {
  Pair p(Framing::BinaryStream, {}, 4096);
  std::string payload(300'000, 'x');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>('a' + i % 26);
  std::string wire;
  size_t sent = 0;
  int partial = 0;
  while (sent < payload.size()) {
    iovec iov{payload.data() + sent, payload.size() - sent};
    ssize_t n = p.server->writev(&iov, 1);
    ASSERT_GE(n, 0);
    if (sent + static_cast<size_t>(n) < payload.size()) ++partial;
    sent += static_cast<size_t>(n);
    wire += p.received();
  }
  iovec none{nullptr, 0};
  p.server->writev(&none, 0);  // the header of an empty write is never sent
  wire += p.received();
  EXPECT_GT(partial, 0);
  auto frames = frames_of(wire);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].second, payload);
}

TEST(WebSocketTransport, PingIsAnsweredAndCloseEchoed) {
  Pair p(Framing::BinaryStream);
  p.send(encode_frame(Opcode::Ping, "p1", true, kMask) + encode_frame(Opcode::Binary, "x", true, kMask) +
         encode_frame(Opcode::Close, close_payload(CloseCode::Normal, "done"), true, kMask));
  session::ReadStatus status;
  EXPECT_EQ(p.read_server(&status), "x");
  EXPECT_EQ(status, session::ReadStatus::Closed);
  auto frames = frames_of(p.received());
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0], std::make_pair(Reader::Kind::Pong, std::string("p1")));
  EXPECT_EQ(frames[1].first, Reader::Kind::Close);
}

TEST(WebSocketTransport, BadInputClosesWithItsCode) {
  Pair p(Framing::BinaryStream);
  p.send(encode_frame(Opcode::Text, "text", true, kMask));  // MQTT is binary
  session::ReadStatus status;
  p.read_server(&status);
  EXPECT_EQ(status, session::ReadStatus::Error);
  EXPECT_NE(p.server->error_text().find("text message"), std::string::npos);
  auto frames = frames_of(p.received());
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].first, Reader::Kind::Close);
  EXPECT_NE(frames[0].second.find("text message"), std::string::npos);  // the reason
}

TEST(WebSocketTransport, TextMessagesArriveAsLinesAndFramesPassThrough) {
  Pair p(Framing::TextMessages);
  p.send(encode_frame(Opcode::Text, "{\"a\":\n1}", true, kMask) + encode_frame(Opcode::Text, "{}", true, kMask));
  EXPECT_EQ(p.read_server(), "{\"a\": 1}\n{}\n");
  std::string frame = encode_frame(Opcode::Text, "{\"seq\":1}");
  iovec iov{frame.data(), frame.size()};
  EXPECT_EQ(p.server->writev(&iov, 1), ssize_t(frame.size()));
  EXPECT_EQ(p.received(), frame);
}

}  // namespace
}  // namespace tw::websocket
