// RequestParser: HTTP/1.1 requests from a connection's bytes, with llhttp
// (Node.js's parser, from Debian's node-llhttp; docs/ARCHITECTURE.md,
// "Dependencies"). It fills a Request (method, percent-decoded path, raw
// query, lower-cased header names, body) and enforces the listener's bounds:
// a request line and headers over max_header_bytes is 431, a body over
// max_body_bytes is 413 (at once when Content-Length says so), anything
// llhttp refuses is 400. Pipelined requests are taken one at a time: feed
// stops after a complete request and says how many bytes it used.
//
// Owned by one connection on the HTTP thread.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "http/route.h"

namespace tw::http {

struct RequestLimits {
  size_t max_header_bytes = 16u << 10;  // request line and headers together
  size_t max_body_bytes = 1u << 20;
};

class RequestParser {
 public:
  enum class Status { NeedMore, Complete, Error };
  struct Outcome {
    Status status = Status::NeedMore;
    size_t consumed = 0;  // bytes of the input used (all of it with NeedMore)
    int http_status = 0;  // with Error: 400, 413 or 431
    std::string error;    // with Error: why, for the response body and the log
  };

  explicit RequestParser(RequestLimits limits = {});
  ~RequestParser();
  RequestParser(const RequestParser&) = delete;
  RequestParser& operator=(const RequestParser&) = delete;

  // Parses from the start of `bytes`, continuing the request begun by earlier calls.
  Outcome feed(std::string_view bytes);
  // After Complete: the request, and what the client asked of the connection.
  Request& request() { return request_; }
  bool keep_alive() const;
  // The request asks to switch protocols (Connection: upgrade, Upgrade: ...).
  bool upgrade() const;
  // True once a request has begun and is not yet complete (its first byte arrived).
  bool in_request() const { return started_; }
  // The current request's headers are all in (request() has them), its body may not be.
  bool headers_complete() const { return headers_complete_; }
  // Readies the parser for the connection's next request.
  void next();

 private:
  struct Callbacks;
  Outcome fail(int http_status, std::string why);
  bool add_header_bytes(size_t n);
  bool finish_url();

  RequestLimits limits_;
  struct State;
  std::unique_ptr<State> state_;
  Request request_;
  std::string url_;
  std::string field_;
  std::string value_;
  bool in_value_ = false;
  bool started_ = false;
  bool complete_ = false;
  bool headers_complete_ = false;
  size_t header_bytes_ = 0;
  int limit_status_ = 0;  // a bound passed inside a callback: 413 or 431
  bool bad_url_ = false;
};

}  // namespace tw::http
