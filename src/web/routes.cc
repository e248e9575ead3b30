#include <algorithm>
#include <string>

#include "web/assets.h"

namespace tw::web {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

http::Response serve(const Asset& asset) {
  http::Response r;
  r.content_type = std::string(content_type(asset.path));
  r.body.assign(reinterpret_cast<const char*>(asset.bytes.data()), asset.bytes.size());
  // The assets change only with the binary; no-cache makes a browser ask
  // again after an upgrade instead of mixing old and new files.
  r.headers.emplace_back("Cache-Control", "no-cache");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  return r;
}

void add_asset(http::Routes& routes, std::string path, const Asset& asset) {
  routes.add("GET", std::move(path), [&asset](const http::Request&) { return serve(asset); });
}

}  // namespace

const Asset* find_asset(std::string_view path) {
  auto all = assets();
  auto it = std::find_if(all.begin(), all.end(), [&](const Asset& a) { return a.path == path; });
  return it == all.end() ? nullptr : &*it;
}

std::string_view content_type(std::string_view path) {
  if (ends_with(path, ".html")) return "text/html; charset=utf-8";
  if (ends_with(path, ".js")) return "text/javascript; charset=utf-8";
  if (ends_with(path, ".css")) return "text/css; charset=utf-8";
  if (ends_with(path, ".svg")) return "image/svg+xml";
  if (ends_with(path, ".png")) return "image/png";
  if (ends_with(path, ".json")) return "application/json";
  return "text/plain; charset=utf-8";
}

void add_routes(http::Routes& routes) {
  for (const Asset& asset : assets()) {
    add_asset(routes, std::string(asset.path), asset);
    // A folder's index page also answers at the folder: "/console/".
    if (ends_with(asset.path, "/index.html")) {
      add_asset(routes, std::string(asset.path.substr(0, asset.path.size() - 10)), asset);
    }
  }
  routes.add("GET", "/", [](const http::Request&) {
    http::Response r = http::Response::text(302, "the web console is at /console/\n");
    r.headers.emplace_back("Location", "/console/");
    return r;
  });
}

}  // namespace tw::web
