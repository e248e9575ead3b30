// http::Server in process: what a route sees, server-sent events, HEAD, a
// failing handler, the connection limit and the idle timeout, over real
// loopback sockets.
#include "http/server.h"


#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

#include "io/socket.h"
#include "testlib/blocking_socket.h"

namespace tw::http {
namespace {

using testing::BlockingSocket;

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
    routes.add("POST", "/echo", [](const Request& r) { return Response::text(200, "got " + r.body); });
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
  BlockingSocket client(port_);
  ASSERT_TRUE(client.send(
      "GET /who?q=a%20b HTTP/1.1\r\n\r\nHEAD /who HTTP/1.1\r\n\r\nGET /fail HTTP/1.1\r\nConnection: close\r\n\r\n"));
  ASSERT_TRUE(client.read_to_close());
  const std::string& out = client.received();
  EXPECT_NE(out.find("peer=set admin=yes q=a b"), std::string::npos) << out;
  // HEAD: the same headers (Content-Length of the GET's body), no body.
  const size_t head = out.find("HTTP/1.1 200", out.find("q=a b"));
  ASSERT_NE(head, std::string::npos) << out;
  EXPECT_EQ(out.find("peer=", head), std::string::npos) << out;
  EXPECT_NE(out.find("HTTP/1.1 500 Internal Server Error"), std::string::npos) << out;
  EXPECT_EQ(server_->stats().requests.load(), 3u);
  EXPECT_EQ(server_->stats().connections_accepted.load(), 1u);
}

TEST_F(ServerTest, ABodyAwaitingContinueGetsIt) {
  start({});
  BlockingSocket client(port_);
  ASSERT_TRUE(client.send("POST /echo HTTP/1.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"));
  EXPECT_EQ(client.read_until("\r\n\r\n"), "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(client.send("hello"));
  EXPECT_NE(client.read_until("got hello").find("HTTP/1.1 200 OK"), std::string::npos) << client.received();
}

TEST_F(ServerTest, ServerSentEventsUntilTheSourceEnds) {
  start({});
  BlockingSocket client(port_);
  ASSERT_TRUE(client.send("GET /events HTTP/1.1\r\n\r\n"));
  EXPECT_TRUE(client.read_to_close()) << "the stream ends when its source does";
  const std::string& out = client.received();
  EXPECT_NE(out.find("Content-Type: text/event-stream"), std::string::npos) << out;
  EXPECT_EQ(out.find("Content-Length"), std::string::npos) << out;
  EXPECT_NE(out.find("retry: 1000\n\ndata: tick 1\ndata: line two\n\ndata: tick 2\ndata: line two\n\n"
                     "data: tick 3\ndata: line two\n\n"),
            std::string::npos)
      << out;
}

TEST_F(ServerTest, ConnectionLimitAndIdleTimeout) {
  ServerSettings settings;
  settings.max_connections = 1;
  settings.idle_timeout_ms = 100;
  start(settings);
  BlockingSocket first(port_);
  ASSERT_TRUE(first.send("GET /who HTTP/1.1\r\n\r\n"));
  EXPECT_NE(first.read_until("admin=yes").find("200 OK"), std::string::npos);
  {
    BlockingSocket second(port_);
    EXPECT_TRUE(second.read_to_close());
    EXPECT_EQ(second.received().find("HTTP/1.1 503 Service Unavailable"), 0u) << second.received();
    EXPECT_EQ(server_->stats().connections_refused.load(), 1u);
  }
  EXPECT_TRUE(first.read_to_close()) << "the idle connection is closed by the listener";
}

}  // namespace
}  // namespace tw::http
