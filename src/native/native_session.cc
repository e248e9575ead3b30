#include "native/native_session.h"
#include "wire/utf8.h"

#include <algorithm>

#include "base/log.h"
#include "native/encoder.h"

namespace tw::native {

namespace {
constexpr uint32_t kMinHeartbeatMs = 100;
constexpr uint32_t kMaxHeartbeatMs = 600'000;
uint64_t ms_to_ns(uint64_t ms) { return ms * 1'000'000ull; }
}  // namespace

NativeSession::NativeSession(Env env, std::unique_ptr<session::Transport> transport, std::string peer,
                             uint64_t now_ns)
    : Session(env, std::move(transport), std::move(peer), NativeEncoder::instance(), now_ns) {}

size_t NativeSession::parse(std::span<const uint8_t> in) {
  size_t pos = 0;
  // A paced reply, or a login being checked, holds the requests behind it.
  while (!closing() && !paced() && !login_pending() && !window_full_) {
    wire::Frame frame;
    auto result = wire::split_frame(in.subspan(pos), env().config.limits.max_frame, frame);
    if (result == wire::SplitResult::NeedMore) break;
    if (result == wire::SplitResult::Malformed) {
      reject(wire::Code::MalformedFrame, "malformed frame header");
      break;
    }
    if (result == wire::SplitResult::TooLarge) {
      reject(wire::Code::FrameTooLarge, "frame larger than max_frame");
      break;
    }
    ++env().counters.frames_in;
    handle(frame);
    pos += frame.size;
  }
  return pos;
}

// The one dispatch switch of the native protocol.
void NativeSession::handle(const wire::Frame& frame) {
  using wire::MsgType;
  if (!is_open()) {
    if (frame.type == MsgType::Hello) return handle_hello(frame);
    return reject(wire::Code::HelloExpected, "the first frame must be HELLO");
  }
  switch (frame.type) {
    case MsgType::Publish: return handle_publish(frame);
    case MsgType::Heartbeat:
      if (!frame.body.empty() || frame.flags != 0) break;
      return;
    case MsgType::Subscribe: return handle_subscribe(frame, true);
    case MsgType::Unsubscribe: return handle_subscribe(frame, false);
    case MsgType::Snapshot: return handle_snapshot(frame);
    case MsgType::Register: return handle_register(frame);
    case MsgType::Provide: return handle_provide(frame, true);
    case MsgType::Withdraw: return handle_provide(frame, false);
    case MsgType::StreamStatus: return handle_stream_status(frame);
    case MsgType::ListChannels: return handle_list_channels(frame);
    case MsgType::Reload: return handle_reload(frame);
    case MsgType::GuaranteedPublish:
    case MsgType::Bind:
    case MsgType::Unbind:
    case MsgType::ConsumerAck:
    case MsgType::Nack: return handle_guaranteed(frame);
    case MsgType::Hello: return reject(wire::Code::MalformedFrame, "HELLO sent twice");
    default: return reject(wire::Code::UnknownType, "unknown or broker-only frame type");
  }
  reject(wire::Code::MalformedFrame, "malformed HEARTBEAT");
}

void NativeSession::reject(wire::Code code, std::string_view text) {
  ++env().counters.protocol_errors;
  fail(code, text);
}

void NativeSession::handle_hello(const wire::Frame& frame) {
  wire::Hello hello;
  if (!wire::decode(frame, hello)) return reject(wire::Code::MalformedFrame, "malformed HELLO");
  if (!wire::valid_text(hello)) return reject(wire::Code::InvalidUtf8, "HELLO client name is not valid UTF-8");
  // Bounded here so that every reply that names the connection (a provider
  // in LIST_CHANNELS, logs) fits its frame.
  if (hello.client_name.size() > wire::kMaxClientName) {
    return reject(wire::Code::MalformedFrame, "HELLO client name longer than 255 bytes");
  }
  if (hello.min_version > wire::kProtocolVersion || hello.max_version < wire::kMinProtocolVersion ||
      hello.min_version > hello.max_version) {
    return fail(wire::Code::UnsupportedVersion, "this broker speaks protocol versions 1 to 4");
  }
  const auto& cfg = env().config;
  version_ = std::min(hello.max_version, wire::kProtocolVersion);
  heartbeat_ms_ = hello.heartbeat_ms ? std::clamp(hello.heartbeat_ms, kMinHeartbeatMs, kMaxHeartbeatMs)
                                     : cfg.heartbeat_ms;
  hello_name_ = std::string(hello.client_name);
  auth::Authority* authority = env().authority;
  if (authority == nullptr) return welcome();
  // Who it is: a password, else a mapped TLS client certificate, else anonymous where allowed.
  if (hello.credentials) return begin_login(hello.user, hello.password);
  auto grants = authority->for_certificate(peer_names());
  if (!grants) grants = authority->for_anonymous();
  if (!grants) {
    ++env().counters.auth_failures;
    return fail(wire::Code::AuthFailed, "authentication required: HELLO version 2 with a user and password");
  }
  set_grants(std::move(grants));
  welcome();
}

void NativeSession::on_login(std::shared_ptr<const auth::Grants> grants, std::string_view error) {
  if (!grants) {
    ++env().counters.auth_failures;
    return fail(wire::Code::AuthFailed, error);
  }
  set_grants(std::move(grants));
  welcome();
}

void NativeSession::welcome() {
  const auto& cfg = env().config;
  const uint32_t idle_timeout_ms = std::max(cfg.idle_timeout_ms, 3 * heartbeat_ms_);
  open(hello_name_, ms_to_ns(idle_timeout_ms));
  wire::Welcome welcome{version_, heartbeat_ms_, cfg.limits.max_frame, cfg.limits.max_subscriptions,
                        cfg.server_name};
  // Layout by the version chosen: a client that offered at most 2 gets the version-2 WELCOME.
  welcome.limits = {cfg.limits.max_registrations, cfg.limits.max_channels, cfg.limits.max_channels_per_connection,
                    cfg.limits.max_topic_length, cfg.limits.max_topic_depth, idle_timeout_ms};
  queue_control(welcome, kControlFrameMax + wire::kWelcomeLimitsSize);
  TW_DEBUG("session %s: HELLO from '%s', version %u, heartbeat %u ms%s%s", peer().c_str(), client_name().c_str(),
           version_, heartbeat_ms_, grants() ? ", user " : "", grants() ? grants()->user().c_str() : "");
}

void NativeSession::on_open_tick(uint64_t now_ns) {
  if (reload_) answer_reload();
  if (now_ns - last_tx_ns() < ms_to_ns(heartbeat_ms_) || !output().empty()) return;
  output().queue(wire::kHeaderSize, [](std::span<uint8_t> out) { return wire::encode_heartbeat(out); });
  set_last_tx_ns(now_ns);
}

uint64_t NativeSession::open_tick_due_ns() const {
  if (reload_) return 0;  // an admin's RELOAD is answered on the tick after the verifier did it
  return last_tx_ns() + ms_to_ns(heartbeat_ms_);
}

size_t NativeSession::encode_goodbye(std::span<uint8_t> out, wire::Code code, std::string_view text) {
  return wire::encode(out, wire::ErrorMsg{code, text.substr(0, out.size() / 2)});
}

void NativeSession::complete_request(uint32_t request_id, const broker::Outcome& outcome) {
  if (!closing()) send_ack(request_id, outcome);
}

void NativeSession::send_ack(uint32_t request_id, const broker::Outcome& outcome) {
  if (outcome.pending) return;  // complete_request sends it
  queue_control(wire::Ack{request_id, outcome.code, outcome.ok() ? std::string_view{} : outcome.detail},
                kControlFrameMax);
}

}  // namespace tw::native
