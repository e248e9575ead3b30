// The browser pages the broker serves, built into the binary: the web
// console (web/console), the stream client both pages use (web/lib), the
// vendored chart library (web/vendor/uplot) and the example price page
// (examples/web). src/web/CMakeLists.txt lists them and
// cmake/embed_assets.cmake turns each into a byte array at build time, so
// the broker serves them with no file to install and no network at run time
// (docs/operations.md, "Web console").
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

#include "http/route.h"

namespace tw::web {

struct Asset {
  std::string_view path;  // where it is served: "/console/index.html"
  std::span<const unsigned char> bytes;
};

// Every embedded file (generated: assets_data.cc).
std::span<const Asset> assets();
// The asset served at `path`, null if none.
const Asset* find_asset(std::string_view path);
// The Content-Type for a file name, by its extension.
std::string_view content_type(std::string_view path);

// Registers GET for every asset, the folders' index pages ("/console/" is
// /console/index.html) and "/" (a redirect to the console).
void add_routes(http::Routes& routes);

}  // namespace tw::web
