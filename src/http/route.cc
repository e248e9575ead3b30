#include "http/route.h"

#include <algorithm>

namespace tw::http {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view text, bool query) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      int hi = hex_value(text[i + 1]);
      int lo = hex_value(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && query) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string_view Request::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (key == name) return value;
  return {};
}

std::optional<std::string> Request::param(std::string_view name) const {
  std::string_view rest = query;
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view{} : rest.substr(amp + 1);
    size_t eq = pair.find('=');
    std::string_view key = pair.substr(0, eq);
    if (key != name) continue;
    if (eq == std::string_view::npos) return std::string();
    return percent_decode(pair.substr(eq + 1), true);
  }
  return std::nullopt;
}

std::string_view Request::path_after(std::string_view prefix) const {
  std::string_view p = path;
  if (!p.starts_with(prefix)) return {};
  return p.substr(prefix.size());
}

Response Response::text(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

Response Response::json(std::string body, int status) {
  Response r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

void Routes::add(std::string method, std::string path, Handler handler, bool prefix) {
  for (auto& route : routes_) {
    if (route.method == method && route.path == path && route.prefix == prefix) {
      route.handler = std::move(handler);
      return;
    }
  }
  routes_.push_back({std::move(method), std::move(path), prefix, std::move(handler)});
}

const Routes::Route* Routes::match(std::string_view path, std::string_view method) const {
  const Route* best = nullptr;
  for (const auto& route : routes_) {
    if (!method.empty() && route.method != method) continue;
    bool hit = route.prefix ? path.starts_with(route.path) : path == route.path;
    if (!hit) continue;
    if (!route.prefix) return &route;  // an exact path beats every prefix
    if (!best || route.path.size() > best->path.size()) best = &route;
  }
  return best;
}

const Handler* Routes::find(std::string_view method, std::string_view path) const {
  const Route* route = match(path, method);
  return route ? &route->handler : nullptr;
}

bool Routes::has_path(std::string_view path) const { return match(path, {}) != nullptr; }

bool Routes::is_open(std::string_view path) const { return std::find(open_.begin(), open_.end(), path) != open_.end(); }

}  // namespace tw::http
