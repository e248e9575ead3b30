// The embedded pages: every file under web/ and examples/web is in the
// binary byte for byte, served at its path with its content type.
#include "web/assets.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace tw::web {
namespace {

std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(TW_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string body_of(const http::Routes& routes, const std::string& path) {
  const http::Handler* h = routes.find("GET", path);
  if (h == nullptr) return "<no route>";
  http::Request request;
  request.method = "GET";
  request.path = path;
  return (*h)(request).body;
}

TEST(WebAssets, EveryFileIsEmbeddedByteForByte) {
  const std::pair<const char*, const char*> files[] = {
      {"/console/index.html", "web/console/index.html"},
      {"/lib/stream.js", "web/lib/stream.js"},
      {"/vendor/uplot/uPlot.iife.min.js", "web/vendor/uplot/uPlot.iife.min.js"},
      {"/examples/web/index.html", "examples/web/index.html"},
  };
  for (const auto& [path, source] : files) {
    const Asset* asset = find_asset(path);
    ASSERT_NE(asset, nullptr) << path;
    const std::string expected = read_source(source);
    ASSERT_FALSE(expected.empty()) << source;
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(asset->bytes.data()), asset->bytes.size()), expected)
        << path;
  }
  EXPECT_EQ(find_asset("/vendor/package.json"), nullptr) << "only the vendored library, not its npm metadata";
}

TEST(WebAssets, RoutesServeFilesFolderIndexesAndTheRootRedirect) {
  http::Routes routes;
  add_routes(routes);
  EXPECT_EQ(body_of(routes, "/console/"), read_source("web/console/index.html"));
  EXPECT_EQ(body_of(routes, "/examples/web/"), read_source("examples/web/index.html"));
  const http::Handler* js = routes.find("GET", "/lib/stream.js");
  ASSERT_NE(js, nullptr);
  http::Request request;
  const http::Response r = (*js)(request);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/javascript; charset=utf-8");
  const http::Response root = (*routes.find("GET", "/"))(request);
  EXPECT_EQ(root.status, 302);
  ASSERT_EQ(root.headers.size(), 1u);
  EXPECT_EQ(root.headers[0], (std::pair<std::string, std::string>{"Location", "/console/"}));
  EXPECT_EQ(routes.find("GET", "/console/missing.js"), nullptr);
}

TEST(WebAssets, ContentTypesByExtension) {
  EXPECT_EQ(content_type("/a/index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(content_type("/a/x.css"), "text/css; charset=utf-8");
  EXPECT_EQ(content_type("/a/x.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(content_type("/a/LICENSE"), "text/plain; charset=utf-8");
}

}  // namespace
}  // namespace tw::web
