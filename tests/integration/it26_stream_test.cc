// /stream against a real broker with authentication on (docs/stream.md,
// "Who the browser is"): the user comes from HTTP Basic credentials on the
// upgrade, or from a first login message; entitlements decide what arrives.
// A WebSocket client in a few lines over a blocking socket: the upgrade,
// masked text frames out, frames read with the broker's own codec (client role).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "auth/password.h"
#include "it_support.h"
#include "testlib/fields.h"
#include "websocket/frame.h"

namespace tw::it {
namespace {

using json = nlohmann::json;

std::string hash(const std::string& password) {
  auto h = auth::hash_password(password, auth::HashCost{1, 1024, 1});  // cheap: tests only
  return h ? *h : std::string();
}

std::string base64(const std::string& text) {
  std::string out(4 * ((text.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

class WsClient {
 public:
  ~WsClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  // Connects and upgrades; `credentials` "user:password" adds HTTP Basic. Returns the HTTP status.
  int open(uint16_t port, const std::string& credentials = "") {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return 0;
    std::string request = "GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
    if (!credentials.empty()) request += "Authorization: Basic " + base64(credentials) + "\r\n";
    request += "\r\n";
    if (::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) return 0;
    while (in_.find("\r\n\r\n") == std::string::npos) {
      if (!fill()) return 0;
    }
    const size_t end = in_.find("\r\n\r\n") + 4;
    const int status = std::atoi(in_.substr(9, 3).c_str());  // "HTTP/1.1 101 ..."
    in_.erase(0, end);
    return status;
  }
  void send(const std::string& text) {
    static const uint8_t mask[4] = {1, 2, 3, 4};
    const std::string frame = websocket::encode_frame(websocket::Opcode::Text, text, true, mask);
    ASSERT_EQ(::send(fd_, frame.data(), frame.size(), MSG_NOSIGNAL), static_cast<ssize_t>(frame.size()));
  }
  // The next text message as JSON; nullopt at a close frame, the end or a timeout.
  std::optional<json> next() {
    for (;;) {
      std::span<uint8_t> bytes(reinterpret_cast<uint8_t*>(in_.data()), in_.size());
      const websocket::Reader::Step step = reader_.next(bytes);
      if (step.kind == websocket::Reader::Kind::Data) {
        message_.append(reinterpret_cast<const char*>(step.payload.data()), step.payload.size());
        in_.erase(0, step.consumed);
        if (!step.message_end) continue;
        json j = json::parse(message_);
        message_.clear();
        return j;
      }
      if (step.kind == websocket::Reader::Kind::Ping || step.kind == websocket::Reader::Kind::Pong) {
        in_.erase(0, step.consumed);
        continue;
      }
      if (step.kind != websocket::Reader::Kind::NeedMore) return std::nullopt;  // a close, or an error
      in_.erase(0, step.consumed);
      if (!fill()) return std::nullopt;
    }
  }

 private:
  bool fill() {
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return false;
    in_.append(buf, static_cast<size_t>(n));
    return true;
  }
  int fd_ = -1;
  std::string in_;
  std::string message_;
  websocket::Reader reader_{{websocket::Role::Client, 1u << 20}};
};

class StreamAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string users;
    users += "[users.feed]\npassword = \"" + hash("feed-pw") + "\"\n";
    users += "[[users.feed.rule]]\nallow = [\"publish\"]\ntopics = [\">\"]\n";
    users += "[users.alice]\npassword = \"" + hash("alice-pw") + "\"\n";
    users += "[[users.alice.rule]]\nallow = [\"subscribe\"]\ntopics = [\"EQ/>\"]\n";
    BrokerOptions options;
    options.config_toml = "auth_file = \"" + dir_.write("users.toml", users) + "\"\nauth_failure_delay_ms = 50\n";
    options.args = {"--http-listen", "127.0.0.1:0"};
    broker_ = std::make_unique<BrokerProcess>(options);
    ASSERT_TRUE(broker_->ready()) << broker_->err();
    http_port_ = broker_->http_port();
    ASSERT_NE(http_port_, 0) << "the port file names the HTTP listener's port";
    ASSERT_TRUE(feed_.connect(broker_->port()));
    ASSERT_TRUE(feed_.login("feed", "feed", "feed-pw").has_value());
    publish(1, "EQ/IBM");
    publish(2, "FX/EUR");
  }
  void publish(uint32_t id, const std::string& topic) {
    ASSERT_TRUE(feed_.register_topic(id, wire::PayloadKind::FieldList, topic));
    ASSERT_TRUE(feed_.publish(id, tw::testing::field_list({{22, int64_t{id}}})));
  }
  // Subscribes to everything: the ack, then the images of what the user may receive.
  void expect_only_equities(WsClient& ws) {
    ws.send(R"({"op":"subscribe","id":1,"topic":">"})");
    auto ack = ws.next();
    ASSERT_TRUE(ack);
    EXPECT_EQ((*ack)["code"], "OK") << ack->dump();
    auto image = ws.next();
    ASSERT_TRUE(image);
    EXPECT_EQ((*image)["topic"], "EQ/IBM");
    ws.send(R"({"op":"subscribe","id":2,"topic":"FX/>"})");
    auto refused = ws.next();
    ASSERT_TRUE(refused);
    EXPECT_EQ((*refused)["id"], 2) << "no FX/EUR image came before: " << refused->dump();
    EXPECT_EQ((*refused)["code"], "NOT_AUTHORIZED");
  }

  testing::TempDir dir_;
  uint16_t http_port_ = 0;
  std::unique_ptr<BrokerProcess> broker_;
  RawClient feed_;
};

TEST_F(StreamAuthTest, BasicCredentialsOnTheUpgradeAreTheStreamsUser) {
  WsClient ws;
  ASSERT_EQ(ws.open(http_port_, "alice:alice-pw"), 101);
  expect_only_equities(ws);
  WsClient wrong;
  EXPECT_EQ(wrong.open(http_port_, "alice:nope"), 401) << "wrong Basic credentials are refused at the upgrade";
}

TEST_F(StreamAuthTest, AFirstLoginMessageIsTheStreamsUser) {
  WsClient ws;
  ASSERT_EQ(ws.open(http_port_), 101);
  ws.send(R"({"op":"login","id":9,"user":"alice","password":"alice-pw"})");
  auto ok = ws.next();
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, json::parse(R"({"type":"ack","id":9,"op":"login","user":"alice","code":"OK"})"));
  expect_only_equities(ws);
}

TEST_F(StreamAuthTest, AWrongPasswordOrNoUserIsRefusedWithAnErrorAndClosed) {
  WsClient wrong;
  ASSERT_EQ(wrong.open(http_port_), 101);
  wrong.send(R"({"op":"login","user":"alice","password":"nope"})");
  auto error = wrong.next();
  ASSERT_TRUE(error);
  EXPECT_EQ((*error)["type"], "error");
  EXPECT_EQ((*error)["code"], "AUTH_FAILED");
  EXPECT_FALSE(wrong.next()) << "then the close";
  WsClient nobody;
  ASSERT_EQ(nobody.open(http_port_), 101);
  nobody.send(R"({"op":"subscribe","topic":">"})");
  error = nobody.next();
  ASSERT_TRUE(error);
  EXPECT_EQ((*error)["code"], "AUTH_FAILED");
  EXPECT_FALSE(nobody.next());
}

}  // namespace
}  // namespace tw::it
