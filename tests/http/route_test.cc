#include "http/route.h"

#include <gtest/gtest.h>

namespace tw::http {
namespace {

Handler answering(std::string body) {
  return [body](const Request&) { return Response::text(200, body); };
}

std::string call(const Routes& routes, std::string_view method, std::string_view path) {
  const Handler* handler = routes.find(method, path);
  if (!handler) return "none";
  return (*handler)(Request{}).body;
}

TEST(Routes, ExactPathBeatsPrefixAndLongestPrefixWins) {
  Routes routes;
  routes.add("GET", "/api/", answering("api"), true);
  routes.add("GET", "/api/v1/snapshot/", answering("snapshot"), true);
  routes.add("GET", "/api/v1/snapshot/x", answering("exact"));
  EXPECT_EQ(call(routes, "GET", "/api/v1/snapshot/Q/A"), "snapshot");
  EXPECT_EQ(call(routes, "GET", "/api/v1/snapshot/x"), "exact");
  EXPECT_EQ(call(routes, "GET", "/api/v1/loops"), "api");
  EXPECT_EQ(call(routes, "GET", "/metrics"), "none");
}

TEST(Routes, MethodMustMatchButPathIsKnown) {
  Routes routes;
  routes.add("POST", "/api/v1/publish/", answering("publish"), true);
  EXPECT_EQ(call(routes, "GET", "/api/v1/publish/Q"), "none");
  EXPECT_TRUE(routes.has_path("/api/v1/publish/Q"));
  EXPECT_FALSE(routes.has_path("/other"));
  routes.add("POST", "/api/v1/publish/", answering("again"), true);
  EXPECT_EQ(call(routes, "POST", "/api/v1/publish/Q"), "again");
}

TEST(Request, QueryParametersAreDecoded) {
  Request request;
  request.query = "prefix=Q%2FA&flag&name=a+b";
  EXPECT_EQ(request.param("prefix"), "Q/A");
  EXPECT_EQ(request.param("flag"), "");
  EXPECT_EQ(request.param("name"), "a b");
  EXPECT_FALSE(request.param("missing"));
  request.path = "/api/v1/snapshot/Q/A";
  EXPECT_EQ(request.path_after("/api/v1/snapshot/"), "Q/A");
  EXPECT_EQ(request.path_after("/other/"), "");
}

TEST(PercentDecode, RejectsBadEscapes) {
  EXPECT_EQ(percent_decode("a%20b", false), "a b");
  EXPECT_EQ(percent_decode("a+b", false), "a+b");
  EXPECT_FALSE(percent_decode("a%2", false));
  EXPECT_FALSE(percent_decode("a%zz", false));
  EXPECT_FALSE(percent_decode("%", false));
}

}  // namespace
}  // namespace tw::http
