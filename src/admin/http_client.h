// A small blocking HTTP/1.1 client for the admin API: `tickwire top` and the
// tests. One request per connection (Connection: close); a server-sent events
// stream is read event by event. Not for the broker's own threads.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tickwire/base/result.h"

namespace tw::admin {

struct HttpReply {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  std::string header(std::string_view name) const;
};

struct HttpTarget {
  std::string host = "127.0.0.1";
  uint16_t port = 9401;
  std::string user;      // HTTP Basic when not empty
  std::string password;
  int timeout_ms = 5'000;
};

Result<HttpReply> http_request(const HttpTarget& target, std::string_view method, std::string_view path,
                               std::string_view body = {}, std::string_view content_type = {});

// A server-sent events stream: connect, then next() returns each event's data.
class EventStream {
 public:
  static Result<EventStream> open(const HttpTarget& target, std::string_view path);
  EventStream(EventStream&& other) noexcept;
  EventStream& operator=(EventStream&&) = delete;
  ~EventStream();
  // The next event's data (its data: lines joined), nullopt on timeout, close or error.
  std::optional<std::string> next(int timeout_ms);

 private:
  explicit EventStream(int fd) : fd_(fd) {}
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace tw::admin
