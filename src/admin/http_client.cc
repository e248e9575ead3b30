#include "admin/http_client.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "http/basic_auth.h"

namespace tw::admin {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

Result<int> connect_to(const HttpTarget& t) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(t.port);
  if (int rc = ::getaddrinfo(t.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return Error{"cannot resolve " + t.host + ": " + ::gai_strerror(rc)};
  }
  int fd = -1;
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      why = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) return Error{"cannot connect to " + t.host + ":" + port + ": " + why};
  return fd;
}

bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads what arrives within timeout_ms into `out`; 0 at EOF, -1 on timeout or error.
ssize_t read_some(int fd, std::string& out, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return -1;
  char chunk[16384];
  ssize_t n = ::read(fd, chunk, sizeof chunk);
  if (n > 0) out.append(chunk, static_cast<size_t>(n));
  return n;
}

std::string request_text(const HttpTarget& t, std::string_view method, std::string_view path, std::string_view body,
                         std::string_view content_type, bool keep_open) {
  std::string req = std::string(method) + " " + std::string(path) + " HTTP/1.1\r\nHost: " + t.host + "\r\n";
  if (!t.user.empty()) req += "Authorization: Basic " + http::base64_encode(t.user + ":" + t.password) + "\r\n";
  if (!content_type.empty()) req += "Content-Type: " + std::string(content_type) + "\r\n";
  if (!body.empty() || method == "POST") req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  req += keep_open ? "Accept: text/event-stream\r\n\r\n" : "Connection: close\r\n\r\n";
  req += body;
  return req;
}

// Parses the status line and headers at the front of `raw`; false when they are not whole yet.
bool parse_head(const std::string& raw, HttpReply& reply, size_t& body_start) {
  const size_t end = raw.find("\r\n\r\n");
  if (end == std::string::npos) return false;
  body_start = end + 4;
  const size_t line_end = raw.find("\r\n");
  const std::string status_line = raw.substr(0, line_end);
  const size_t space = status_line.find(' ');
  reply.status = space == std::string::npos ? 0 : std::atoi(status_line.c_str() + space + 1);
  size_t pos = line_end + 2;
  while (pos < end) {
    size_t next = raw.find("\r\n", pos);
    const std::string line = raw.substr(pos, next - pos);
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
      size_t v = colon + 1;
      while (v < line.size() && line[v] == ' ') ++v;
      reply.headers.emplace_back(lower(line.substr(0, colon)), line.substr(v));
    }
    pos = next + 2;
  }
  return true;
}

}  // namespace

std::string HttpReply::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (key == name) return value;
  return {};
}

Result<HttpReply> http_request(const HttpTarget& target, std::string_view method, std::string_view path,
                               std::string_view body, std::string_view content_type) {
  auto fd = connect_to(target);
  if (!fd) return fd.error();
  if (!send_all(*fd, request_text(target, method, path, body, content_type, false))) {
    ::close(*fd);
    return Error{"cannot send the request"};
  }
  std::string raw;
  HttpReply reply;
  size_t body_start = 0;
  bool head = false;
  for (;;) {
    const ssize_t n = read_some(*fd, raw, target.timeout_ms);
    if (n < 0) {
      ::close(*fd);
      return Error{"no complete answer within " + std::to_string(target.timeout_ms) + " ms"};
    }
    if (!head) head = parse_head(raw, reply, body_start);
    if (head && !reply.header("content-length").empty() &&
        raw.size() - body_start >= std::stoul(reply.header("content-length"))) {
      break;
    }
    if (n == 0) break;
  }
  ::close(*fd);
  if (!head) return Error{"malformed HTTP answer"};
  reply.body = raw.substr(body_start);
  return reply;
}

Result<EventStream> EventStream::open(const HttpTarget& target, std::string_view path) {
  auto fd = connect_to(target);
  if (!fd) return fd.error();
  EventStream stream(*fd);
  if (!send_all(*fd, request_text(target, "GET", path, {}, {}, true))) return Error{"cannot send the request"};
  HttpReply reply;
  size_t body_start = 0;
  std::string raw;
  while (!parse_head(raw, reply, body_start)) {
    if (read_some(*fd, raw, target.timeout_ms) <= 0) return Error{"no answer to the event stream request"};
  }
  if (reply.status != 200) return Error{"event stream refused: HTTP " + std::to_string(reply.status)};
  stream.buffer_ = raw.substr(body_start);
  return stream;
}

EventStream::EventStream(EventStream&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), buffer_(std::move(other.buffer_)) {}

EventStream::~EventStream() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::string> EventStream::next(int timeout_ms) {
  for (;;) {
    const size_t end = buffer_.find("\n\n");
    if (end != std::string::npos) {
      std::string data;
      size_t pos = 0;
      while (pos < end) {
        size_t line_end = buffer_.find('\n', pos);
        if (line_end > end) line_end = end;
        std::string_view line(buffer_.data() + pos, line_end - pos);
        if (line.starts_with("data:")) {
          line.remove_prefix(line.starts_with("data: ") ? 6 : 5);
          if (!data.empty()) data += '\n';
          data += line;
        }
        pos = line_end + 1;
      }
      buffer_.erase(0, end + 2);
      return data;
    }
    if (read_some(fd_, buffer_, timeout_ms) <= 0) return std::nullopt;
  }
}

}  // namespace tw::admin
