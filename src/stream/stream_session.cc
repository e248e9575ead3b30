#include "stream/stream_session.h"

#include <algorithm>

#include "base/log.h"
#include "stream/json_encoder.h"
#include "stream/reply.h"
#include "websocket/frame.h"
#include "wire/utf8.h"

namespace tw::stream {
namespace {

uint64_t ms_to_ns(uint64_t ms) { return ms * 1'000'000ull; }

}  // namespace

StreamSession::StreamSession(Env env, std::unique_ptr<session::Transport> transport, std::string peer,
                             std::string_view user, uint64_t now_ns)
    : Session(env, std::move(transport), std::move(peer), JsonEncoder::instance(), now_ns),
      heartbeat_ns_(ms_to_ns(std::max<uint32_t>(env.config.heartbeat_ms, 100))),
      last_ping_ns_(now_ns) {
  if (env.authority == nullptr) {
    open_as("browser");
  } else if (!user.empty()) {
    // The listener checked the password: the user's grants under the current
    // users file. A user removed since is treated as no user (handle_first).
    const auth::User* known = env.authority->policy()->find_user(user);
    if (known != nullptr) {
      set_grants(known->grants);
      open_as(user);
    }
  }  // else the first message says who it is (handle_first)
}

void StreamSession::open_as(std::string_view name) {
  // Silent for three pings: gone (a browser answers each ping by itself).
  open(name, std::max<uint64_t>(ms_to_ns(env().config.idle_timeout_ms), 3 * heartbeat_ns_));
}

// One message a line (the transport's TextMessages); an empty line is a pong.
size_t StreamSession::parse(std::span<const uint8_t> in) {
  const std::string_view text(reinterpret_cast<const char*>(in.data()), in.size());
  size_t pos = 0;
  while (!closing() && !login_pending()) {  // messages behind a login wait for its answer
    const size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      if (text.size() - pos > kMaxRequest) refuse(wire::Code::FrameTooLarge, "a request larger than 4096 bytes");
      break;
    }
    const std::string_view message = text.substr(pos, end - pos);
    pos = end + 1;
    if (message.empty()) continue;
    if (message.size() > kMaxRequest) {
      refuse(wire::Code::FrameTooLarge, "a request larger than 4096 bytes");
      break;
    }
    ++env().counters.frames_in;
    handle_message(message);
  }
  return pos;
}

void StreamSession::handle_message(std::string_view text) {
  Result<Request> request = parse_request(text);
  if (!request) return refuse(wire::Code::MalformedFrame, request.error().message);
  if (!is_open()) return handle_first(*request);
  handle(*request);
}

void StreamSession::handle(const Request& request) {
  switch (request.op) {
    case Op::Subscribe: return subscribe(request);
    case Op::Unsubscribe: return unsubscribe(request);
    case Op::Login: return refuse(wire::Code::MalformedFrame, "login must be the first message");
  }
}

void StreamSession::handle_first(const Request& request) {
  if (request.op == Op::Login) {
    login_ = request;
    return begin_login(request.user, request.password);
  }
  std::shared_ptr<const auth::Grants> anonymous = env().authority->for_anonymous();
  if (!anonymous) {
    ++env().counters.auth_failures;
    return refuse(wire::Code::AuthFailed,
                  "authentication required: HTTP Basic credentials, or a first message {\"op\":\"login\"}");
  }
  set_grants(std::move(anonymous));
  open_as("anonymous");
  handle(request);
}

void StreamSession::on_login(std::shared_ptr<const auth::Grants> grants, std::string_view error) {
  const Request request = std::move(*login_);
  login_.reset();
  if (!grants) {  // the goodbye says why
    ++env().counters.auth_failures;
    return fail(wire::Code::AuthFailed, error);
  }
  set_grants(std::move(grants));
  open_as(request.user);
  answer(request, wire::Code::Ok, "");
}

void StreamSession::refuse(wire::Code code, std::string_view text) {
  ++env().counters.protocol_errors;
  fail(code, text);
}

void StreamSession::on_open_tick(uint64_t now_ns) {
  if (now_ns - last_ping_ns_ < heartbeat_ns_) return;
  // Behind whatever is queued: a browser that reads nothing answers nothing, and is closed as idle.
  output().queue(websocket::kMaxHeaderBytes, [](std::span<uint8_t> out) {
    return websocket::encode_header(out.data(), websocket::Opcode::Ping, true, 0);
  });
  last_ping_ns_ = now_ns;
}

uint64_t StreamSession::open_tick_due_ns() const { return last_ping_ns_ + heartbeat_ns_; }

// An error message the page can show; the transport's close (1001) follows
// it as the connection shuts down (docs/stream.md).
size_t StreamSession::encode_goodbye(std::span<uint8_t> out, wire::Code code, std::string_view text) {
  text = text.substr(0, 200);
  while (!text.empty() && !wire::valid_utf8(text)) text.remove_suffix(1);  // cut inside a character
  return encode_text_message(out, error_json(code, text));
}

session::SessionFactory session_factory() {
  return [](session::Session::Env env, std::unique_ptr<session::Transport> transport, std::string peer,
            const std::string& user, uint64_t now_ns) -> std::unique_ptr<session::Session> {
    return std::make_unique<StreamSession>(env, std::move(transport), std::move(peer), user, now_ns);
  };
}

}  // namespace tw::stream
