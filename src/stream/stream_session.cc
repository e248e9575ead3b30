#include "stream/stream_session.h"

#include <algorithm>

#include "base/log.h"
#include "stream/json_encoder.h"
#include "stream/reply.h"
#include "wire/utf8.h"

namespace tw::stream {
namespace {

uint64_t ms_to_ns(uint64_t ms) { return ms * 1'000'000ull; }

CloseCode close_code_for(wire::Code code) {
  switch (code) {
    case wire::Code::ServerShutdown:
    case wire::Code::IdleTimeout: return CloseCode::GoingAway;
    case wire::Code::FrameTooLarge: return CloseCode::TooBig;
    case wire::Code::InvalidUtf8: return CloseCode::InvalidData;
    default: return CloseCode::Policy;
  }
}

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

size_t StreamSession::parse(std::span<const uint8_t> in) {
  size_t pos = 0;
  while (!closing() && !login_pending()) {  // messages behind a login wait for its answer
    const std::span<const uint8_t> rest = in.subspan(pos);
    Frame frame;
    const Cut cut = read_frame_header(rest, kMaxRequest, frame);
    if (cut == Cut::NeedMore) break;
    if (cut == Cut::Bad) {
      refuse(CloseCode::ProtocolError, wire::Code::MalformedFrame, "malformed WebSocket frame");
      break;
    }
    if (cut == Cut::TooBig) {
      refuse(CloseCode::TooBig, wire::Code::FrameTooLarge, "message larger than 4096 bytes");
      break;
    }
    if (rest.size() < frame.size()) break;
    handle_frame(frame, rest.first(frame.size()));
    pos += frame.size();
  }
  return pos;
}

void StreamSession::handle_frame(const Frame& frame, std::span<const uint8_t> bytes) {
  if (frame.control()) return handle_control(frame, bytes);
  if (frame.opcode == Opcode::Binary) {
    return refuse(CloseCode::Unsupported, wire::Code::MalformedFrame, "binary messages are not part of /stream");
  }
  // RFC 6455 5.4: a continuation only within a message, a new message only after the last ended.
  if ((frame.opcode == Opcode::Continuation) != in_message_) {
    return refuse(CloseCode::ProtocolError, wire::Code::MalformedFrame, "WebSocket fragments out of order");
  }
  if (message_.size() + frame.length > kMaxRequest) {
    return refuse(CloseCode::TooBig, wire::Code::FrameTooLarge, "message larger than 4096 bytes");
  }
  unmask_into(bytes, frame, message_);
  in_message_ = !frame.fin;
  if (in_message_) return;
  const std::string_view text(reinterpret_cast<const char*>(message_.data()), message_.size());
  if (!wire::valid_utf8(text)) {
    return refuse(CloseCode::InvalidData, wire::Code::InvalidUtf8, "a text message that is not UTF-8");
  }
  ++env().counters.frames_in;
  handle_message(text);
  message_.clear();
  if (message_.capacity() > 512) message_.shrink_to_fit();  // a large request does not stay held
}

void StreamSession::handle_control(const Frame& frame, std::span<const uint8_t> bytes) {
  std::vector<uint8_t> payload;
  unmask_into(bytes, frame, payload);
  switch (frame.opcode) {
    case Opcode::Ping: return queue_control(Opcode::Pong, payload);
    case Opcode::Close:
      // Answered with the same code, then closed (RFC 6455 5.5.1).
      queue_control(Opcode::Close, std::span<const uint8_t>(payload).first(std::min<size_t>(payload.size(), 2)));
      return fail(wire::Code::Ok, "the browser closed the stream");
    default: return;  // a pong: any input keeps the connection alive
  }
}

void StreamSession::queue_control(Opcode opcode, std::span<const uint8_t> payload) {
  output().queue(kControlFrameMax, [&](std::span<uint8_t> out) { return encode_control(out, opcode, payload); });
}

void StreamSession::handle_message(std::string_view text) {
  Result<Request> request = parse_request(text);
  if (!request) return refuse(CloseCode::Policy, wire::Code::MalformedFrame, request.error().message);
  if (!is_open()) return handle_first(*request);
  handle(*request);
}

void StreamSession::handle(const Request& request) {
  switch (request.op) {
    case Op::Subscribe: return subscribe(request);
    case Op::Unsubscribe: return unsubscribe(request);
    case Op::Login: return refuse(CloseCode::Policy, wire::Code::MalformedFrame, "login must be the first message");
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
    return refuse(CloseCode::Policy, wire::Code::AuthFailed,
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
    close_ = CloseCode::Policy;
    return fail(wire::Code::AuthFailed, error);
  }
  set_grants(std::move(grants));
  open_as(request.user);
  answer(request, wire::Code::Ok, "");
}

void StreamSession::refuse(CloseCode close, wire::Code code, std::string_view text) {
  ++env().counters.protocol_errors;
  close_ = close;
  fail(code, text);
}

void StreamSession::on_open_tick(uint64_t now_ns) {
  if (now_ns - last_ping_ns_ < heartbeat_ns_) return;
  // Behind whatever is queued: a browser that reads nothing answers nothing, and is closed as idle.
  queue_control(Opcode::Ping, {});
  last_ping_ns_ = now_ns;
}

uint64_t StreamSession::open_tick_due_ns() const { return last_ping_ns_ + heartbeat_ns_; }

// An error message the page can show, then the Close frame (RFC 6455 7.4).
size_t StreamSession::encode_goodbye(std::span<uint8_t> out, wire::Code code, std::string_view text) {
  text = text.substr(0, 200);
  while (!text.empty() && !wire::valid_utf8(text)) text.remove_suffix(1);  // cut inside a character
  const size_t n = encode_text_message(out, error_json(code, text));
  return n + encode_close(out.subspan(n), close_.value_or(close_code_for(code)), text);
}

}  // namespace tw::stream
