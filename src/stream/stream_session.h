// StreamSession: a browser on /stream (docs/stream.md). The HTTP listener
// answers the WebSocket upgrade and hands the connection to a loop, which
// makes this session on its transport; from then on it is a session like
// any other (src/session): the same delivery policy (slow consumers,
// conflation per subscription), counters and entitlements as native and
// MQTT subscribers. The protocol: JSON requests in WebSocket text messages
// (request.h), JSON image/update/status messages out (json_encoder.h).
//
// Who it is: the user the listener authenticated from the upgrade's HTTP
// Basic credentials; else the first message may be {"op":"login"} (the
// password is checked off the loop, as a native HELLO's); else the
// anonymous grants where the users file allows them; else the connection is
// refused. Authentication off: everything is allowed.
//
// Liveness: the broker pings every heartbeat_ms; a browser answers each
// ping with a pong by itself, so a page that only listens is never idle.
//   stream_session.cc  frames, the lifecycle, login, the goodbye
//   requests.cc        subscribe and unsubscribe, the answers
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "session/session.h"
#include "stream/frame_reader.h"
#include "stream/request.h"

namespace tw::stream {

class StreamSession final : public session::Session {
 public:
  // `user`: who the HTTP listener authenticated for the upgrade ("" = nobody).
  StreamSession(Env env, std::unique_ptr<session::Transport> transport, std::string peer, std::string_view user,
                uint64_t now_ns);

  // A browser neither provides channels nor lists them.
  void send_request(uint32_t, std::string_view) override {}
  void send_release(uint32_t) override {}
  void send_channel_info(const wire::ChannelInfo&) override {}
  void complete_request(uint32_t, const broker::Outcome&) override {}

  // The largest request a browser may send, in bytes (after reassembly).
  static constexpr size_t kMaxRequest = 4096;

 protected:
  size_t parse(std::span<const uint8_t> in) override;
  size_t encode_goodbye(std::span<uint8_t> out, wire::Code code, std::string_view text) override;
  void on_open_tick(uint64_t now_ns) override;
  uint64_t open_tick_due_ns() const override;
  void on_login(std::shared_ptr<const auth::Grants> grants, std::string_view error) override;

 private:
  void handle_frame(const Frame& frame, std::span<const uint8_t> bytes);
  void handle_control(const Frame& frame, std::span<const uint8_t> bytes);
  void handle_message(std::string_view text);
  // The first request of a connection that is not yet open (authentication on).
  void handle_first(const Request& request);
  void handle(const Request& request);
  // Bad input: counted, answered with an error message and a Close frame with `close`.
  void refuse(CloseCode close, wire::Code code, std::string_view text);
  // The connection is open: named after its user (or "browser"), closed when silent.
  void open_as(std::string_view name);
  void queue_control(Opcode opcode, std::span<const uint8_t> payload);

  // requests.cc
  void subscribe(const Request& request);
  void unsubscribe(const Request& request);
  void answer(const Request& request, wire::Code code, std::string_view text);

  std::vector<uint8_t> message_;  // a fragmented text message being reassembled
  bool in_message_ = false;
  std::optional<Request> login_;  // the login request whose password is being checked
  std::optional<CloseCode> close_;  // set by refuse(); else derived from the close's wire code
  uint64_t heartbeat_ns_;
  uint64_t last_ping_ns_ = 0;
};

}  // namespace tw::stream
