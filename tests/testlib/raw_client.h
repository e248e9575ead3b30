// A blocking-with-timeout native-protocol client over a raw TCP socket, for
// black-box broker tests. Frames are built with the wire codec; send_raw is
// for the deliberately malformed bytes a test wants to send.
//
// Not thread-safe: one RawClient per thread. Stream frames that arrive while
// a helper (subscribe, snapshot) waits for its ACK are kept and returned by
// next() in arrival order, so no message is lost or reordered.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tickwire/wire/codec.h"

namespace tw::testing {

// One received frame with its own bytes; decoded views point into `bytes`,
// so keep the OwnedFrame alive (moving it keeps them valid, copying does not).
class OwnedFrame {
 public:
  explicit OwnedFrame(std::vector<uint8_t> bytes);
  OwnedFrame(OwnedFrame&&) = default;
  OwnedFrame& operator=(OwnedFrame&&) = default;
  OwnedFrame(const OwnedFrame&) = delete;  // the decoded views would point into the source
  OwnedFrame& operator=(const OwnedFrame&) = delete;
  wire::MsgType type() const { return frame_.type; }
  uint8_t flags() const { return frame_.flags; }
  const wire::Frame& frame() const { return frame_; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  // The decoded body, or nullopt when the type differs or the body is malformed.
  template <typename T>
  std::optional<T> as() const;

 private:
  bool is(const wire::Hello&) const { return type() == wire::MsgType::Hello; }
  bool is(const wire::Welcome&) const { return type() == wire::MsgType::Welcome; }
  bool is(const wire::Ack&) const { return type() == wire::MsgType::Ack; }
  bool is(const wire::ChannelIntro&) const { return type() == wire::MsgType::Channel; }
  bool is(const wire::Image&) const { return type() == wire::MsgType::Image; }
  bool is(const wire::Update&) const { return type() == wire::MsgType::Update; }
  bool is(const wire::StatusMsg&) const { return type() == wire::MsgType::Status; }
  bool is(const wire::ErrorMsg&) const { return type() == wire::MsgType::Error; }
  bool is(const wire::Request&) const { return type() == wire::MsgType::Request; }
  bool is(const wire::ReleaseMsg&) const { return type() == wire::MsgType::Release; }
  bool is(const wire::ChannelInfo&) const { return type() == wire::MsgType::ChannelInfo; }
  std::vector<uint8_t> bytes_;
  wire::Frame frame_;
};

template <typename T>
std::optional<T> OwnedFrame::as() const {
  T out{};
  if (!is(out) || !wire::decode(frame_, out)) return std::nullopt;
  return out;
}

std::string describe(const OwnedFrame& frame);  // "ACK req=1 code=OK", for failure messages

// An ACK with its text copied out of the frame.
struct AckReply {
  uint32_t request_id = 0;
  wire::Code code = wire::Code::Ok;
  std::string text;
};

// One LIST_CHANNELS row with its strings copied out of the frame.
struct ChannelInfoRow {
  uint32_t channel_id = 0;
  wire::ChannelState state = wire::ChannelState::Ok;
  uint32_t subscribers = 0;
  uint64_t seq = 0;
  std::string topic;
  std::string provider;  // "client_name@host:port", "" for broadcast channels
};

// The answer to LIST_CHANNELS: its rows, then the ACK.
struct ListReply {
  std::optional<AckReply> ack;
  std::vector<ChannelInfoRow> rows;
};

// The frames a SNAPSHOT request produced: its CHANNEL and IMAGE (when found) and the ACK.
struct SnapshotReply {
  std::optional<AckReply> ack;
  std::optional<OwnedFrame> channel;
  std::optional<OwnedFrame> image;
};

inline constexpr int kDefaultTimeoutMs = 10'000;  // a safety net, never a performance bound

class RawClient {
 public:
  RawClient() = default;
  ~RawClient();
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;
  RawClient(RawClient&& other) noexcept;

  // Connects to 127.0.0.1:port. rcvbuf > 0 shrinks the socket receive buffer
  // (set before connecting, so the TCP window stays small).
  bool connect(uint16_t port, int timeout_ms = kDefaultTimeoutMs, int rcvbuf = 0);
  // Connects to 127.0.0.1:port from `source` (loopback takes any 127/8
  // address): the broker sees another client address.
  bool connect_from(const std::string& source, uint16_t port, int timeout_ms = kDefaultTimeoutMs);
  bool connected() const { return fd_ >= 0; }
  // Bytes written to and read from the socket since it was made (the admin API's counts, it24).
  uint64_t bytes_sent() const { return bytes_sent_; }
  uint64_t bytes_received() const { return bytes_received_; }
  // Closes abruptly (no goodbye); a later connect() may reopen.
  void close();

  // Sends every byte or fails (false on error or timeout).
  bool send_raw(std::span<const uint8_t> bytes, int timeout_ms = kDefaultTimeoutMs);
  // Encodes with `encode(std::span<uint8_t>) -> size_t` and sends the frame.
  template <typename Encode>
  bool send_encoded(Encode&& encode, size_t max_size = 1u << 20);

  bool send_hello(std::string_view name, uint32_t heartbeat_ms = 0, uint16_t min_version = wire::kProtocolVersion,
                  uint16_t max_version = wire::kProtocolVersion);
  bool send_subscribe(uint32_t request_id, std::string_view pattern);
  bool send_unsubscribe(uint32_t request_id, std::string_view pattern);
  bool send_snapshot(uint32_t request_id, std::string_view topic);
  bool send_heartbeat();
  bool register_topic(uint32_t publish_id, wire::PayloadKind kind, std::string_view topic);
  bool publish(uint32_t publish_id, std::span<const uint8_t> payload, bool image = false);
  // Interactive providers and administration (raw_client_providers.cc).
  bool send_provide(uint32_t request_id, std::string_view service, std::string_view pattern = "");
  bool send_withdraw(uint32_t request_id, std::string_view service);
  bool send_stream_status(uint32_t stream_id, wire::ChannelState state, wire::Code code, std::string_view text);
  bool send_list_channels(uint32_t request_id, std::string_view service);

  // The next frame (kept ones first), or nullopt on timeout or end of stream
  // (then closed_by_peer() tells which). HEARTBEATs are returned like any frame.
  std::optional<OwnedFrame> next(int timeout_ms = kDefaultTimeoutMs);
  // Like next() but skips HEARTBEAT frames.
  std::optional<OwnedFrame> next_message(int timeout_ms = kDefaultTimeoutMs);
  // The next frame of `type`, discarding everything else before it.
  std::optional<OwnedFrame> next_of_type(wire::MsgType type, int timeout_ms = kDefaultTimeoutMs);

  // HELLO, then the broker's answer (WELCOME, or ERROR).
  std::optional<OwnedFrame> hello(std::string_view name, uint32_t heartbeat_ms = 0);
  // HELLO version 2 with a user and password, then the broker's answer.
  std::optional<OwnedFrame> login(std::string_view name, std::string_view user, std::string_view password);
  // Each sends its request and waits for the matching ACK; other frames are kept for next().
  std::optional<AckReply> subscribe(uint32_t request_id, std::string_view pattern,
                                    int timeout_ms = kDefaultTimeoutMs);
  std::optional<AckReply> unsubscribe(uint32_t request_id, std::string_view pattern,
                                      int timeout_ms = kDefaultTimeoutMs);
  SnapshotReply snapshot(uint32_t request_id, std::string_view topic, int timeout_ms = kDefaultTimeoutMs);
  std::optional<AckReply> provide(uint32_t request_id, std::string_view service, std::string_view pattern = "",
                                  int timeout_ms = kDefaultTimeoutMs);
  std::optional<AckReply> withdraw(uint32_t request_id, std::string_view service, int timeout_ms = kDefaultTimeoutMs);
  // Rows of the request come out of the stream; every other frame is kept for next().
  ListReply list_channels(uint32_t request_id, std::string_view service, int timeout_ms = kDefaultTimeoutMs);
  // The rows and ACK of a LIST_CHANNELS already sent with send_list_channels.
  ListReply list_channels_reply(uint32_t request_id, int timeout_ms = kDefaultTimeoutMs);
  // Waits for the ACK of a request sent with one of the send_* calls.
  std::optional<AckReply> wait_ack(uint32_t request_id, int timeout_ms = kDefaultTimeoutMs) {
    return await_ack(request_id, timeout_ms);
  }

  // Reads until the broker closes the connection; returns the code of the
  // ERROR frame seen on the way (Ok when none came) or nullopt on timeout.
  std::optional<wire::Code> wait_closed_with(int timeout_ms = kDefaultTimeoutMs);
  // True when the broker closed the socket within timeout_ms.
  bool wait_closed(int timeout_ms = kDefaultTimeoutMs) { return wait_closed_with(timeout_ms).has_value(); }
  bool closed_by_peer() const { return peer_closed_; }

 private:
  std::optional<AckReply> await_ack(uint32_t request_id, int timeout_ms);
  bool open(uint16_t port, int timeout_ms, int rcvbuf, const char* source);
  // Reads until the ACK of request_id. Each other frame is offered to
  // `claim` (with the unclaimed frames so far); what it does not take is kept,
  // in order, for next().
  using Claim = std::function<bool(OwnedFrame& frame, std::deque<OwnedFrame>& unclaimed)>;
  std::optional<AckReply> read_until_ack(uint32_t request_id, int timeout_ms, const Claim& claim);
  // Reads what the socket has within timeout_ms into in_; false on timeout or end of stream.
  bool fill(int timeout_ms);
  std::optional<OwnedFrame> take_buffered();
  void keep_in_front(std::deque<OwnedFrame>& frames);
  template <typename Pred>
  std::optional<OwnedFrame> next_of_type_if(Pred&& wanted, int timeout_ms);

  int fd_ = -1;
  bool peer_closed_ = false;
  // Kept across calls: the ERROR frame may be read by a wait that times out
  // before the close behind it arrives, and the next wait must still see it.
  wire::Code goodbye_code_ = wire::Code::Ok;
  std::vector<uint8_t> in_;
  size_t in_start_ = 0;
  std::deque<OwnedFrame> kept_;
  uint64_t bytes_sent_ = 0;
  uint64_t bytes_received_ = 0;
  std::vector<uint8_t> scratch_;
};

template <typename Encode>
bool RawClient::send_encoded(Encode&& encode, size_t max_size) {
  if (scratch_.size() < max_size) scratch_.resize(max_size);
  size_t n = encode(std::span<uint8_t>(scratch_.data(), max_size));
  if (n == 0) return false;
  return send_raw({scratch_.data(), n});
}

template <typename Pred>
std::optional<OwnedFrame> RawClient::next_of_type_if(Pred&& wanted, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    auto f = next(static_cast<int>(std::max<int64_t>(0, left.count())));
    if (!f || wanted(f->type())) return f;
  }
}

// Appends one encoded frame to `batch` (for publishers that send many frames per write).
template <typename Encode>
void append_frame(std::vector<uint8_t>& batch, size_t max_size, Encode&& encode) {
  size_t old = batch.size();
  batch.resize(old + max_size);
  size_t n = encode(std::span<uint8_t>(batch.data() + old, max_size));
  batch.resize(old + n);
}

}  // namespace tw::testing
