// Partial reads and writes through the transport seam, at every split point:
// a native session whose transport hands it its input cut at each byte
// offset, or takes its output a few bytes per write, must answer with the
// same bytes as one that reads and writes everything at once.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "broker/router.h"
#include "tickwire/fields/field_list.h"
#include "native/native_session.h"
#include "session/tcp_transport.h"
#include "tickwire/wire/codec.h"

namespace tw::session {
namespace {

// Plain TCP that moves at most `write_cap` bytes per writev (0 = no cap).
class CappedTransport final : public Transport {
 public:
  CappedTransport(int fd, size_t write_cap) : tcp_(fd), write_cap_(write_cap) {}
  int fd() const override { return tcp_.fd(); }
  Handshake handshake() override { return Handshake::Done; }
  ReadResult read(std::span<uint8_t> out) override { return tcp_.read(out); }
  ssize_t writev(const iovec* iov, int count) override {
    if (write_cap_ == 0) return tcp_.writev(iov, count);
    std::vector<iovec> capped;
    size_t left = write_cap_;
    for (int i = 0; i < count && left > 0; ++i) {
      capped.push_back({iov[i].iov_base, std::min(left, iov[i].iov_len)});
      left -= capped.back().iov_len;
    }
    ++writes;
    return tcp_.writev(capped.data(), static_cast<int>(capped.size()));
  }
  void shutdown() override { tcp_.shutdown(); }
  std::string_view kind() const override { return "capped"; }
  size_t writes = 0;

 private:
  TcpTransport tcp_;
  size_t write_cap_;
};

std::vector<uint8_t> client_bytes() {
  std::vector<uint8_t> all;
  auto add = [&](auto&& encode) {
    std::vector<uint8_t> buf(512);
    buf.resize(encode(std::span<uint8_t>(buf)));
    all.insert(all.end(), buf.begin(), buf.end());
  };
  add([](auto out) { return wire::encode(out, wire::Hello{1, 1, 0, "split"}); });
  add([](auto out) { return wire::encode(out, wire::MsgType::Subscribe, wire::Subscribe{1, "T/1"}); });
  add([](auto out) { return wire::encode(out, wire::Snapshot{2, "T/1"}); });
  add([](auto out) { return wire::encode(out, wire::MsgType::Subscribe, wire::Subscribe{3, "bad//topic"}); });
  return all;
}

// One broker loop with a channel and one native session on a socketpair.
struct Loop {
  config::BrokerConfig config;
  reactor::Reactor reactor;
  output::Fanout fanout{1 << 16};
  broker::Counters counters;
  session::LoopState loop{64u << 20};
  broker::Router router{broker::RouterLimits{}, fanout};
  std::unique_ptr<native::NativeSession> session;
  CappedTransport* transport = nullptr;
  int peer = -1;

  explicit Loop(size_t write_cap) {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    ::fcntl(fds[1], F_SETFL, O_NONBLOCK);
    peer = fds[1];
    cache::ChannelId id = 0;
    EXPECT_TRUE(router.advertise("T/1", wire::PayloadKind::FieldList, id).ok());
    std::vector<uint8_t> image(64);
    fields::FieldListWriter w(image);
    w.add_int(22, 1234);
    image.resize(w.finish());
    EXPECT_TRUE(router.publish(id, image, true).ok());
    auto capped = std::make_unique<CappedTransport>(fds[0], write_cap);
    transport = capped.get();
    session = std::make_unique<native::NativeSession>(native::NativeSession::Env{config, reactor, router, fanout, counters, loop},
                                                      std::move(capped), "split", 0);
    EXPECT_TRUE(reactor.add(fds[0], EPOLLIN, session.get()));
  }
  ~Loop() {
    router.remove_outlet(session.get());
    reactor.remove(session->fd());
    ::close(peer);
  }
  void deliver(std::span<const uint8_t> bytes) {
    ASSERT_EQ(::write(peer, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    session->on_io(EPOLLIN);
    fanout.flush_all();
  }
  // Writes until the queue is empty, reading everything the peer receives.
  std::vector<uint8_t> received() {
    std::vector<uint8_t> out;
    uint8_t buf[4096];
    for (int spins = 0; spins < 100'000; ++spins) {
      for (ssize_t n; (n = ::read(peer, buf, sizeof buf)) > 0;) out.insert(out.end(), buf, buf + n);
      if (!session->has_output()) break;
      session->on_io(EPOLLOUT);
    }
    return out;
  }
};

std::vector<uint8_t> reference_reply() {
  Loop loop(0);
  loop.deliver(client_bytes());
  return loop.received();
}

TEST(TransportSplit, InputCutAtEveryByteGivesTheSameReply) {
  const auto input = client_bytes();
  const auto want = reference_reply();
  ASSERT_GT(want.size(), 40u);
  for (size_t cut = 1; cut < input.size(); ++cut) {
    Loop loop(0);
    loop.deliver({input.data(), cut});
    loop.deliver({input.data() + cut, input.size() - cut});
    EXPECT_EQ(loop.received(), want) << "input cut at byte " << cut;
  }
}

TEST(TransportSplit, OutputTakenAFewBytesPerWriteGivesTheSameBytes) {
  const auto want = reference_reply();
  for (size_t cap = 1; cap <= want.size(); cap += cap < 16 ? 1 : 7) {
    Loop loop(cap);
    loop.deliver(client_bytes());
    EXPECT_EQ(loop.received(), want) << "writes of at most " << cap << " bytes";
    EXPECT_GE(loop.transport->writes, want.size() / cap) << cap;
  }
}

}  // namespace
}  // namespace tw::session
