// http::Server in process: what a route sees, server-sent events, HEAD, a
// failing handler, the connection limit and the idle timeout, over real
// loopback sockets.
#include "http/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

#include "io/socket.h"

namespace tw::http {
namespace {

constexpr int kWaitMs = 5'000;  // a safety net, never a performance bound

int connect_to(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval tv{kWaitMs / 1000, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

// Reads until `text` arrived or the peer closed (or the safety net).
std::string read_until(int fd, std::string_view text) {
  std::string out;
  char buf[4096];
  while (out.find(text) == std::string::npos) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

class ServerTest : public ::testing::Test {
 protected:
  void start(ServerSettings settings) {
    auto fd = io::listen_tcp("127.0.0.1", 0);
    ASSERT_TRUE(fd.ok());
    listen_fd_ = *fd;
    port_ = io::local_port(listen_fd_);
    Routes routes;
    routes.add("GET", "/who", [](const Request& r) {
      return Response::text(200, "peer=" + std::string(r.peer.empty() ? "none" : "set") + " admin=" +
                                     (r.admin ? "yes" : "no") + " q=" + r.param("q").value_or("-"));
    });
    routes.add("GET", "/fail", [](const Request&) -> Response { throw std::runtime_error("boom"); });
    routes.add("GET", "/events", [this](const Request&) {
      Response r;
      r.body = "retry: 1000\n\n";
      r.event_interval_ms = 10;
      r.next_event = [this]() -> std::optional<std::string> {
        int n = ++events_;
        if (n > 3) return std::nullopt;
        return "tick " + std::to_string(n) + "\nline two";
      };
      return r;
    });
    server_ = std::make_unique<Server>(settings, std::move(routes), nullptr);
    server_->add_listener({listen_fd_, nullptr, "http test"});
    server_->start();
  }
  void TearDown() override {
    server_.reset();
    io::close_fd(listen_fd_);
  }

  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<int> events_{0};
  std::unique_ptr<Server> server_;
};

TEST_F(ServerTest, ARouteSeesTheRequestAndWithoutAuthorityIsAdmin) {
  start({});
  int fd = connect_to(port_);
  std::string req = "GET /who?q=a%20b HTTP/1.1\r\n\r\nHEAD /who HTTP/1.1\r\n\r\nGET /fail HTTP/1.1\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(::send(fd, req.data(), req.size(), 0), ssize_t(req.size()));
  std::string out = read_until(fd, "internal error\n");
  EXPECT_NE(out.find("peer=set admin=yes q=a b"), std::string::npos) << out;
  // HEAD: the same headers (Content-Length of the GET's body), no body.
  const size_t head = out.find("HTTP/1.1 200", out.find("q=a b"));
  ASSERT_NE(head, std::string::npos) << out;
  EXPECT_EQ(out.find("peer=", head), std::string::npos) << out;
  EXPECT_NE(out.find("HTTP/1.1 500 Internal Server Error"), std::string::npos) << out;
  EXPECT_EQ(server_->stats().requests.load(), 3u);
  EXPECT_EQ(server_->stats().connections_accepted.load(), 1u);
  ::close(fd);
}

TEST_F(ServerTest, ServerSentEventsUntilTheSourceEnds) {
  start({});
  int fd = connect_to(port_);
  std::string req = "GET /events HTTP/1.1\r\n\r\n";
  ASSERT_EQ(::send(fd, req.data(), req.size(), 0), ssize_t(req.size()));
  std::string out = read_until(fd, "data: tick 3\ndata: line two\n\n");
  char c;
  EXPECT_EQ(::recv(fd, &c, 1, 0), 0) << "the stream ends when its source does";
  EXPECT_NE(out.find("Content-Type: text/event-stream"), std::string::npos) << out;
  EXPECT_EQ(out.find("Content-Length"), std::string::npos) << out;
  EXPECT_NE(out.find("retry: 1000\n\ndata: tick 1\ndata: line two\n\ndata: tick 2\ndata: line two\n\n"
                     "data: tick 3\ndata: line two\n\n"),
            std::string::npos)
      << out;
  ::close(fd);
}

TEST_F(ServerTest, ConnectionLimitAndIdleTimeout) {
  ServerSettings settings;
  settings.max_connections = 1;
  settings.idle_timeout_ms = 100;
  start(settings);
  int first = connect_to(port_);
  std::string req = "GET /who HTTP/1.1\r\n\r\n";
  ASSERT_EQ(::send(first, req.data(), req.size(), 0), ssize_t(req.size()));
  EXPECT_NE(read_until(first, "admin=yes").find("200 OK"), std::string::npos);
  int second = connect_to(port_);
  EXPECT_NE(read_until(second, "connection limit hit").find("503 Service Unavailable"), std::string::npos);
  EXPECT_EQ(server_->stats().connections_refused.load(), 1u);
  ::close(second);
  // The idle first connection is closed by the listener: recv sees the end.
  char c;
  EXPECT_EQ(::recv(first, &c, 1, 0), 0);
  ::close(first);
}

}  // namespace
}  // namespace tw::http
