// A real StreamSession on one end of a socketpair, with the real router,
// fanout and delivery policy: the test writes WebSocket frames as the
// browser and reads what the broker answers; ticks are driven by hand with
// chosen clock values, so no test depends on how fast it runs.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "auth/authority.h"
#include "auth/password.h"
#include "base/clock.h"
#include "broker/counters.h"
#include "output/fanout.h"
#include "broker/router.h"
#include "config/config.h"
#include "reactor/reactor.h"
#include "session/socket_pair.h"
#include "session/tcp_transport.h"
#include "stream/stream_session.h"
#include "stream/ws_peer.h"
#include "websocket/transport.h"
#include "testlib/fields.h"

namespace tw::stream {
namespace {

using namespace testing;
using json = nlohmann::ordered_json;
constexpr uint64_t kMs = 1'000'000;

struct StreamHarness {
  config::BrokerConfig config;
  reactor::Reactor reactor;
  output::Fanout fanout{1 << 20};
  broker::Counters counters;
  std::unique_ptr<broker::Router> router;
  session::LoopState loop{64u << 20};
  std::unique_ptr<StreamSession> session;
  int peer = -1;
  Bytes in;

  void open(auth::Authority* authority = nullptr, std::string_view user = "", uint64_t now_ns = monotonic_ns(),
            const broker::RouterLimits& limits = {}, int socket_buffer = 0) {
    const session::testing::SocketPair fds = session::testing::make_socket_pair(socket_buffer);
    ASSERT_GE(fds.peer, 0);
    peer = fds.peer;
    router = std::make_unique<broker::Router>(limits, fanout);
    // As the HTTP listener hands it over: a WebSocket transport over TCP, the browser's frames read for the session.
    auto transport = std::make_unique<websocket::Transport>(std::make_unique<session::TcpTransport>(fds.session),
                                                            websocket::Settings{websocket::Framing::TextMessages});
    session = std::make_unique<StreamSession>(
        StreamSession::Env{config, reactor, *router, fanout, counters, loop, authority}, std::move(transport), "test",
        user, now_ns);
    ASSERT_TRUE(reactor.add(fds.session, EPOLLIN, session.get()));
  }
  ~StreamHarness() {
    if (session && session->fd() >= 0) reactor.remove(session->fd());
    if (peer >= 0) ::close(peer);
  }
  // Writes as the browser, lets the session read, ends the turn, returns what came back.
  std::vector<ServerFrame> send(const Bytes& bytes) {
    EXPECT_EQ(::write(peer, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    session->on_io(EPOLLIN);
    return turn();
  }
  std::vector<ServerFrame> turn() {
    fanout.flush_all();
    if (session->closing()) session->finish();
    uint8_t buf[65536];
    for (ssize_t n; (n = ::read(peer, buf, sizeof buf)) > 0;) in.insert(in.end(), buf, buf + n);
    return cut_server_frames(in);
  }
  std::vector<ServerFrame> tick(uint64_t now_ns) {
    session->on_tick(now_ns);
    return turn();
  }
  cache::ChannelId channel(const std::string& topic) {
    cache::ChannelId id = 0;
    EXPECT_TRUE(router->advertise(topic, wire::PayloadKind::FieldList, id).ok());
    return id;
  }
  void publish(cache::ChannelId id, int64_t bid) {
    ASSERT_TRUE(router->publish(id, tw::testing::field_list({{22, bid}}), false).ok());
  }
};

// The JSON of each text frame; other frames are checked to be absent.
std::vector<json> messages(const std::vector<ServerFrame>& frames) {
  std::vector<json> out;
  for (const ServerFrame& f : frames) {
    EXPECT_EQ(f.first, 0x81) << "a text message in one frame";
    out.push_back(f.json());
  }
  return out;
}

class StreamSessionTest : public ::testing::Test, protected StreamHarness {};

TEST_F(StreamSessionTest, SubscribeGetsAnAckThenImagesThenUpdatesInSubSJsonShape) {
  open();
  const auto aapl = channel("DEMO/EQ/AAPL");
  publish(aapl, 100);
  auto got = messages(send(text(R"({"op":"subscribe","id":7,"topic":"DEMO/EQ/>"})")));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], json::parse(R"({"type":"ack","id":7,"op":"subscribe","topic":"DEMO/EQ/>","code":"OK"})"));
  EXPECT_EQ(got[1]["type"], "image");
  EXPECT_EQ(got[1]["topic"], "DEMO/EQ/AAPL");
  EXPECT_EQ(got[1]["seq"], 1);
  EXPECT_EQ(got[1]["fields"]["BID"], 100);

  publish(aapl, 101);
  publish(aapl, 102);
  got = messages(turn());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].dump(), R"({"type":"update","topic":"DEMO/EQ/AAPL","channel":)" + std::to_string(aapl) +
                               R"(,"seq":2,"fields":{"BID":101}})");
  EXPECT_EQ(got[1]["seq"], 3);

  got = messages(send(text(R"({"op":"unsubscribe","id":8,"topic":"DEMO/EQ/>"})")));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0]["code"], "OK");
  publish(aapl, 103);
  EXPECT_TRUE(turn().empty());
  EXPECT_EQ(messages(send(text(R"({"op":"unsubscribe","topic":"DEMO/EQ/>"})")))[0]["code"], "NOT_SUBSCRIBED");
}

TEST_F(StreamSessionTest, AConflatedSubscriptionGetsOneMergedRefreshPerInterval) {
  const uint64_t t0 = monotonic_ns();
  open(nullptr, "", t0);
  const auto ibm = channel("EQ/IBM");
  publish(ibm, 1);
  auto got = messages(send(text(R"({"op":"subscribe","topic":"EQ/IBM","conflate_ms":250})")));
  ASSERT_EQ(got.size(), 2u);  // the ack, and the image at once
  for (int i = 2; i <= 20; ++i) publish(ibm, i);
  EXPECT_TRUE(turn().empty()) << "held until the interval ends";
  EXPECT_EQ(session->conflation_pending(), 1u);
  got = messages(tick(monotonic_ns() + 250 * kMs));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0]["type"], "image");  // the refresh: every field's latest value
  EXPECT_EQ(got[0]["seq"], 20);
  EXPECT_EQ(got[0]["fields"]["BID"], 20);
  EXPECT_EQ(session->conflation_refreshes(), 1u);
}

TEST_F(StreamSessionTest, ASlowBrowserUnderTheDisconnectPolicyIsClosedAlone) {
  config.limits.max_output_buffer = 16 * 1024;
  open(nullptr, "", monotonic_ns(), {}, 4096);
  const auto id = channel("FAST/X");
  send(text(R"({"op":"subscribe","topic":"FAST/X","policy":"disconnect"})"));
  for (int i = 0; i < 5000 && !session->closing(); ++i) {
    publish(id, i);
    fanout.flush_all();  // nobody reads the peer: the socket fills, then the queue
  }
  EXPECT_TRUE(session->closing());
  EXPECT_TRUE(session->slow_stats().disconnected);
}

TEST_F(StreamSessionTest, ASlowBrowserUnderTheDropPolicyIsToldOfTheGapInAStatusMessage) {
  config.limits.max_output_buffer = 16 * 1024;
  open(nullptr, "", monotonic_ns(), {}, 4096);
  const auto id = channel("FAST/Y");
  publish(id, 0);
  send(text(R"({"op":"subscribe","topic":"FAST/Y","policy":"drop"})"));
  for (int i = 1; i <= 3000; ++i) {
    publish(id, i);
    fanout.flush_all();
  }
  ASSERT_GT(session->slow_stats().dropped_messages, 0u);
  std::vector<json> got;
  for (int round = 0; round < 1000 && session->has_output(); ++round) {  // the browser reads again
    for (auto& m : messages(turn())) got.push_back(m);
    session->on_io(EPOLLOUT);
  }
  for (auto& m : messages(turn())) got.push_back(m);
  const auto notice = std::find_if(got.begin(), got.end(), [](const json& m) { return m["type"] == "status"; });
  ASSERT_NE(notice, got.end());
  EXPECT_EQ((*notice)["code"], "MESSAGES_DROPPED");
  EXPECT_EQ((*notice)["topic"], "FAST/Y");
  EXPECT_EQ((*notice)["state"], "OK");
  EXPECT_FALSE(session->closing());
}

TEST_F(StreamSessionTest, EntitlementsDecideWhatAUserMaySubscribe) {
  auto policy = auth::Policy::parse(R"(
[users.alice]
[[users.alice.rule]]
allow = ["subscribe"]
topics = ["EQ/>"]
[[users.alice.rule]]
allow = ["subscribe-delayed"]
delay_s = 900
topics = ["LSE/>"]
)", "users.toml");
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  auth::Authority authority({"users.toml", false, 0}, *policy);
  open(&authority, "alice");
  publish(channel("EQ/IBM"), 1);
  publish(channel("FX/EUR"), 1);
  auto got = messages(send(text(R"({"op":"subscribe","topic":"FX/>"})")));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0]["code"], "NOT_AUTHORIZED");
  got = messages(send(text(R"({"op":"subscribe","topic":"LSE/VOD"})")));
  EXPECT_EQ(got[0]["code"], "NOT_AUTHORIZED") << "delayed-only data is refused on the real-time stream";
  got = messages(send(text(R"({"op":"subscribe","topic":">"})")));
  ASSERT_EQ(got[0]["code"], "OK");  // a wildcard overlapping a grant: only what is granted arrives
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1]["topic"], "EQ/IBM");
  EXPECT_EQ(counters.entitlement_refusals, 2u);
}

TEST_F(StreamSessionTest, WithoutCredentialsOrAnonymousGrantsTheFirstRequestIsRefused) {
  auto policy = auth::Policy::parse("[users.alice]\n", "users.toml");
  ASSERT_TRUE(policy.ok());
  auth::Authority authority({"users.toml", false, 0}, *policy);
  open(&authority, "");
  auto got = send(text(R"({"op":"subscribe","topic":">"})"));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].json()["type"], "error");
  EXPECT_EQ(got[0].json()["code"], "AUTH_FAILED");
  EXPECT_EQ(got[1].opcode(), 0x8);
  EXPECT_EQ(got[1].close_code(), 1001);
  EXPECT_EQ(counters.auth_failures, 1u);
}

TEST_F(StreamSessionTest, ALoginMessageIsCheckedOffTheLoopThenTheStreamOpens) {
  const std::string path = ::testing::TempDir() + "/stream_login_" + std::to_string(::getpid()) + ".toml";
  std::ofstream(path) << "[users.bob]\npassword = \"" << *auth::hash_password("pw", {1, 1024, 1}) << "\"\n"
                      << "[[users.bob.rule]]\nallow = [\"subscribe\"]\ntopics = [\"EQ/>\"]\n";
  auto policy = auth::Policy::load(path);
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  auth::Authority authority({path, false, 0}, *policy);
  authority.start();
  open(&authority, "");
  publish(channel("EQ/IBM"), 1);
  // The subscribe behind the login waits for its answer.
  Bytes both = text(R"({"op":"login","id":1,"user":"bob","password":"pw"})");
  const Bytes sub = text(R"({"op":"subscribe","id":2,"topic":"EQ/>"})");
  both.insert(both.end(), sub.begin(), sub.end());
  EXPECT_TRUE(send(both).empty());
  std::vector<json> got;
  for (int i = 0; i < 500 && got.size() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    for (auto& m : messages(tick(monotonic_ns()))) got.push_back(m);
  }
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], json::parse(R"({"type":"ack","id":1,"op":"login","user":"bob","code":"OK"})"));
  EXPECT_EQ(got[1]["id"], 2);
  EXPECT_EQ(got[2]["topic"], "EQ/IBM");
  authority.stop();
  std::remove(path.c_str());
}

// Bad requests: an error message the page can show, then the transport's close; the session closes.
TEST_F(StreamSessionTest, BadRequestsAreAnsweredWithAnErrorMessageThenClosed) {
  const std::pair<std::string, const char*> cases[] = {
      {"{nope", "MALFORMED_FRAME"},
      {R"({"op":"publish"})", "MALFORMED_FRAME"},
      {R"({"op":"subscribe","topic":5})", "MALFORMED_FRAME"},
      {R"({"op":"subscribe","topic":"A","conflate_ms":9999999})", "MALFORMED_FRAME"},
      {R"({"op":"login","user":"a","password":"b"})", "MALFORMED_FRAME"},  // the connection is open already
      {std::string(5000, ' '), "FRAME_TOO_LARGE"},
  };
  for (const auto& [request, code] : cases) {
    SCOPED_TRACE(request.substr(0, 60));
    StreamHarness h;
    h.open();
    auto got = h.send(text(request));
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].json()["type"], "error");
    EXPECT_EQ(got[0].json()["code"], code);
    EXPECT_EQ(got[1].opcode(), 0x8);
    EXPECT_EQ(got[1].close_code(), 1001);
    EXPECT_TRUE(h.session->closing() || h.session->fd() < 0);
    EXPECT_EQ(h.counters.protocol_errors, 1u);
  }
}

// What breaks the WebSocket itself: the transport closes with RFC 6455's code, the session ends.
TEST_F(StreamSessionTest, BrokenFramesAreClosedByTheTransportWithTheirCode) {
  const std::pair<Bytes, uint16_t> cases[] = {
      {client_frame(0x82, "{}"), 1003},         // binary
      {client_frame(0x81, "{}", false), 1002},  // unmasked
      {client_frame(0xC1, "{}"), 1002},         // a reserved bit
      {client_frame(0x83, "{}"), 1002},         // an unknown opcode
      {client_frame(0x80, "{}"), 1002},         // a continuation outside a message
      {client_frame(0x09, ""), 1002},           // a fragmented ping
      {text("{\"op\":\"\xff\"}"), 1007},        // not UTF-8
  };
  for (const auto& [frames, close_code] : cases) {
    SCOPED_TRACE(close_code);
    StreamHarness h;
    h.open();
    auto got = h.send(frames);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].opcode(), 0x8);
    EXPECT_EQ(got[0].close_code(), close_code);
    EXPECT_TRUE(h.session->fd() < 0) << "the session ended";
  }
}

TEST_F(StreamSessionTest, FragmentsReassembleAroundAPingAndEverySplitPointParses) {
  const std::string request = R"({"op":"subscribe","id":3,"topic":"A/B"})";
  Bytes frames = client_frame(0x01, request.substr(0, 10));   // text, not final
  const Bytes ping = client_frame(0x89, "hi");                // control frames may come between fragments
  const Bytes rest = client_frame(0x80, request.substr(10));  // continuation, final
  frames.insert(frames.end(), ping.begin(), ping.end());
  frames.insert(frames.end(), rest.begin(), rest.end());
  for (size_t split = 1; split < frames.size(); ++split) {
    SCOPED_TRACE(split);
    StreamHarness h;
    h.open();
    h.publish(h.channel("A/B"), 1);
    auto got = h.send(Bytes(frames.begin(), frames.begin() + static_cast<long>(split)));
    auto more = h.send(Bytes(frames.begin() + static_cast<long>(split), frames.end()));
    got.insert(got.end(), more.begin(), more.end());
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].first, 0x8A);  // the pong, with the ping's payload
    EXPECT_EQ(got[0].payload, "hi");
    EXPECT_EQ(got[1].json()["id"], 3);
    EXPECT_EQ(got[2].json()["type"], "image");
  }
}

TEST_F(StreamSessionTest, APongIsInputThatKeepsAListeningPageOpen) {
  const uint64_t long_ago = monotonic_ns() - 60'000 * kMs;  // silent since, unless it answers a ping
  StreamHarness silent;
  silent.open(nullptr, "", long_ago);
  silent.tick(monotonic_ns());
  EXPECT_TRUE(silent.session->fd() < 0) << "closed as idle";
  open(nullptr, "", long_ago);
  send(client_frame(0x8A, ""));
  tick(monotonic_ns());
  EXPECT_TRUE(session->fd() >= 0 && !session->closing());
}

TEST_F(StreamSessionTest, TheBrokerPingsEveryHeartbeatAndAClosingBrowserGetsItsCloseBack) {
  const uint64_t t0 = monotonic_ns();
  config.heartbeat_ms = 1000;
  open(nullptr, "", t0);
  EXPECT_TRUE(tick(t0 + 999 * kMs).empty());
  auto got = tick(t0 + 1000 * kMs);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, 0x89);
  got = send(client_frame(0x88, std::string("\x03\xe8", 2)));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].opcode(), 0x8);
  EXPECT_EQ(got[0].close_code(), 1000);
  EXPECT_EQ(counters.protocol_errors, 0u);
}

}  // namespace
}  // namespace tw::stream
