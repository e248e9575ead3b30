#include "http/request_parser.h"

#include <llhttp.h>

#include <algorithm>
#include <cctype>

namespace tw::http {

struct RequestParser::State {
  llhttp_t parser;
  llhttp_settings_t settings;
};

// llhttp calls these with the parser; its `data` is the RequestParser.
struct RequestParser::Callbacks {
  static RequestParser& self(llhttp_t* p) { return *static_cast<RequestParser*>(p->data); }

  static int on_message_begin(llhttp_t* p) {
    self(p).started_ = true;
    return HPE_OK;
  }
  static int on_url(llhttp_t* p, const char* at, size_t n) {
    RequestParser& r = self(p);
    if (!r.add_header_bytes(n)) return HPE_USER;
    r.url_.append(at, n);
    return HPE_OK;
  }
  static int on_header_field(llhttp_t* p, const char* at, size_t n) {
    RequestParser& r = self(p);
    if (!r.add_header_bytes(n)) return HPE_USER;
    if (r.in_value_) {
      r.request_.headers.emplace_back(std::move(r.field_), std::move(r.value_));
      r.field_.clear();
      r.value_.clear();
      r.in_value_ = false;
    }
    for (size_t i = 0; i < n; ++i) r.field_.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(at[i]))));
    return HPE_OK;
  }
  static int on_header_value(llhttp_t* p, const char* at, size_t n) {
    RequestParser& r = self(p);
    if (!r.add_header_bytes(n)) return HPE_USER;
    r.in_value_ = true;
    r.value_.append(at, n);
    return HPE_OK;
  }
  static int on_headers_complete(llhttp_t* p) {
    RequestParser& r = self(p);
    if (r.in_value_ || !r.field_.empty()) {
      r.request_.headers.emplace_back(std::move(r.field_), std::move(r.value_));
      r.field_.clear();
      r.value_.clear();
      r.in_value_ = false;
    }
    r.headers_complete_ = true;
    r.request_.method = llhttp_method_name(static_cast<llhttp_method_t>(llhttp_get_method(p)));
    if (!r.finish_url()) return HPE_USER;
    // A declared body over the bound is refused before any of it is read.
    if ((p->flags & F_CONTENT_LENGTH) != 0 && p->content_length > r.limits_.max_body_bytes) {
      r.limit_status_ = 413;
      return HPE_USER;
    }
    return HPE_OK;
  }
  static int on_body(llhttp_t* p, const char* at, size_t n) {
    RequestParser& r = self(p);
    if (r.request_.body.size() + n > r.limits_.max_body_bytes) {
      r.limit_status_ = 413;
      return HPE_USER;
    }
    r.request_.body.append(at, n);
    return HPE_OK;
  }
  // Stops the parser after each request: the next one waits for next().
  static int on_message_complete(llhttp_t* p) {
    self(p).complete_ = true;
    return HPE_PAUSED;
  }
};

RequestParser::RequestParser(RequestLimits limits) : limits_(limits), state_(std::make_unique<State>()) {
  llhttp_settings_init(&state_->settings);
  state_->settings.on_message_begin = Callbacks::on_message_begin;
  state_->settings.on_url = Callbacks::on_url;
  state_->settings.on_header_field = Callbacks::on_header_field;
  state_->settings.on_header_value = Callbacks::on_header_value;
  state_->settings.on_headers_complete = Callbacks::on_headers_complete;
  state_->settings.on_body = Callbacks::on_body;
  state_->settings.on_message_complete = Callbacks::on_message_complete;
  llhttp_init(&state_->parser, HTTP_REQUEST, &state_->settings);
  state_->parser.data = this;
}

RequestParser::~RequestParser() = default;

bool RequestParser::add_header_bytes(size_t n) {
  header_bytes_ += n;
  if (header_bytes_ <= limits_.max_header_bytes) return true;
  limit_status_ = 431;
  return false;
}

// "/a%20b?x=1" -> path "/a b", query "x=1"; a fragment is dropped.
bool RequestParser::finish_url() {
  std::string_view url = url_;
  url = url.substr(0, url.find('#'));
  const size_t mark = url.find('?');
  auto path = percent_decode(url.substr(0, mark), /*query=*/false);
  if (!path || path->empty() || path->front() != '/') {
    bad_url_ = true;
    return false;
  }
  request_.path = std::move(*path);
  request_.query = mark == std::string_view::npos ? std::string() : std::string(url.substr(mark + 1));
  return true;
}

RequestParser::Outcome RequestParser::fail(int http_status, std::string why) {
  return {Status::Error, 0, http_status, std::move(why)};
}

RequestParser::Outcome RequestParser::feed(std::string_view bytes) {
  llhttp_t* p = &state_->parser;
  const llhttp_errno_t rc = llhttp_execute(p, bytes.data(), bytes.size());
  if (rc == HPE_OK) return {Status::NeedMore, bytes.size(), 0, {}};
  if ((rc == HPE_PAUSED || rc == HPE_PAUSED_UPGRADE) && complete_) {
    const size_t used = static_cast<size_t>(llhttp_get_error_pos(p) - bytes.data());
    return {Status::Complete, used, 0, {}};
  }
  if (limit_status_ == 431) return fail(431, "request line and headers over " + std::to_string(limits_.max_header_bytes) + " bytes");
  if (limit_status_ == 413) return fail(413, "body over " + std::to_string(limits_.max_body_bytes) + " bytes");
  if (bad_url_) return fail(400, "bad request target '" + url_.substr(0, 64) + "'");
  const char* reason = llhttp_get_error_reason(p);
  return fail(400, std::string("malformed request: ") + llhttp_errno_name(rc) + (reason ? std::string(" (") + reason + ")" : ""));
}

bool RequestParser::keep_alive() const { return llhttp_should_keep_alive(&state_->parser) != 0; }

bool RequestParser::upgrade() const { return state_->parser.upgrade != 0; }

void RequestParser::next() {
  request_ = Request{};
  url_.clear();
  field_.clear();
  value_.clear();
  in_value_ = started_ = complete_ = headers_complete_ = bad_url_ = false;
  header_bytes_ = 0;
  limit_status_ = 0;
  if (llhttp_get_errno(&state_->parser) == HPE_PAUSED) llhttp_resume(&state_->parser);
}

}  // namespace tw::http
