// RequestParser: requests through llhttp with the listener's bounds, at every
// split point, pipelined, and refused with the right status.
#include "http/request_parser.h"

#include <gtest/gtest.h>

namespace tw::http {
namespace {

using Status = RequestParser::Status;

constexpr std::string_view kGet =
    "GET /api/v1/snapshot/Q%2FA?prefix=Q%2F&x=1 HTTP/1.1\r\nHost: h\r\nX-Mixed-Case: Value\r\n\r\n";

TEST(RequestParser, FillsTheRequest) {
  RequestParser parser;
  auto outcome = parser.feed(kGet);
  ASSERT_EQ(outcome.status, Status::Complete) << outcome.error;
  EXPECT_EQ(outcome.consumed, kGet.size());
  const Request& r = parser.request();
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.path, "/api/v1/snapshot/Q/A");
  EXPECT_EQ(r.query, "prefix=Q%2F&x=1");
  EXPECT_EQ(r.param("prefix"), "Q/");
  EXPECT_EQ(r.header("x-mixed-case"), "Value");
  EXPECT_TRUE(parser.keep_alive());
  EXPECT_FALSE(parser.upgrade());
}

TEST(RequestParser, SameRequestAtEverySplitPoint) {
  const std::string post = "POST /p HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello";
  for (size_t split = 0; split <= post.size(); ++split) {
    RequestParser parser;
    auto first = parser.feed(std::string_view(post).substr(0, split));
    if (first.status == Status::Complete) {
      EXPECT_EQ(split, post.size());
    } else {
      ASSERT_EQ(first.status, Status::NeedMore) << split;
      auto second = parser.feed(std::string_view(post).substr(split));
      ASSERT_EQ(second.status, Status::Complete) << split;
    }
    EXPECT_EQ(parser.request().body, "hello") << split;
    EXPECT_EQ(parser.request().method, "POST");
  }
}

TEST(RequestParser, PipelinedRequestsOneAtATime) {
  std::string two = "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\nConnection: close\r\n\r\n";
  RequestParser parser;
  auto first = parser.feed(two);
  ASSERT_EQ(first.status, Status::Complete);
  EXPECT_EQ(parser.request().path, "/a");
  parser.next();
  auto second = parser.feed(std::string_view(two).substr(first.consumed));
  ASSERT_EQ(second.status, Status::Complete);
  EXPECT_EQ(parser.request().path, "/b");
  EXPECT_FALSE(parser.keep_alive());
}

TEST(RequestParser, BoundsAndMalformedInputHaveTheirStatus) {
  RequestLimits limits{256, 10};
  {
    RequestParser parser(limits);
    auto o = parser.feed("GET / HTTP/1.1\r\nX: " + std::string(300, 'a') + "\r\n\r\n");
    EXPECT_EQ(o.status, Status::Error);
    EXPECT_EQ(o.http_status, 431);
  }
  {
    RequestParser parser(limits);
    auto o = parser.feed("POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n");  // refused before the body
    EXPECT_EQ(o.http_status, 413);
  }
  {
    RequestParser parser(limits);
    auto o = parser.feed("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\nabcdef\r\n0\r\n\r\n");
    EXPECT_EQ(o.http_status, 413);
  }
  for (std::string_view bad : {"GARBAGE\r\n\r\n", "GET / HTTP/9.9\r\n\r\n", "GET /%zz HTTP/1.1\r\n\r\n",
                               "GET noslash HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nBad Header\r\n\r\n"}) {
    RequestParser parser(limits);
    auto o = parser.feed(bad);
    EXPECT_EQ(o.status, Status::Error) << bad;
    EXPECT_EQ(o.http_status, 400) << bad;
    EXPECT_FALSE(o.error.empty());
  }
}

TEST(RequestParser, UpgradeIsReported) {
  RequestParser parser;
  auto o = parser.feed("GET /mqtt HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n\x82\x80");
  ASSERT_EQ(o.status, Status::Complete);
  EXPECT_TRUE(parser.upgrade());
  EXPECT_EQ(std::string_view("GET /mqtt HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n").size(), o.consumed);
}

}  // namespace
}  // namespace tw::http
