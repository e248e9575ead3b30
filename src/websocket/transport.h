// websocket::Transport: a session's bytes as WebSocket messages over another
// transport (TCP or TLS), so a protocol session runs unchanged over
// WebSocket (MqttSession over /mqtt). Made by the HTTP listener after the
// opening handshake (handshake.h), then owned by one session on its loop.
//
// Framing::BinaryStream (MQTT): the binary messages' payloads are read as
// one byte stream, whatever their fragmentation; each writev becomes one
// unmasked binary frame whose header is written from this transport's own
// buffer in the same gather write as the caller's iovecs: no allocation and
// no copy per message. Text messages are refused (close 1003).
// Framing::TextMessages (the browser stream): the session writes whole
// frames itself (encode_header in frame.h, then the JSON), which pass
// through unchanged; each text message read arrives followed by '\n' (a
// newline inside one becomes a space: JSON whitespace), and each pong as an
// empty line (input, for the session's idle clock). Binary is refused (1003).
//
// Both: pings are answered with pongs, a close is answered with a close and
// reads as Closed, a protocol error sends a close with its code (1002,
// 1007, 1009) and reads as Error with error_text(). Control frames the
// transport sends wait for a frame boundary of the session's output.
#pragma once
#include <memory>
#include <string>

#include "session/transport.h"
#include "websocket/frame.h"

namespace tw::websocket {

enum class Framing : uint8_t { BinaryStream, TextMessages };

struct Settings {
  Framing framing = Framing::BinaryStream;
  uint64_t max_message = 1u << 20;
};

class Transport final : public session::Transport {
 public:
  // `early_input`: bytes the listener read after the handshake request (the client's first frames).
  Transport(std::unique_ptr<session::Transport> inner, Settings settings, std::string early_input = {});
  ~Transport() override = default;

  int fd() const override { return inner_->fd(); }
  session::Handshake handshake() override { return session::Handshake::Done; }
  session::ReadResult read(std::span<uint8_t> out) override;
  ssize_t writev(const iovec* iov, int count) override;
  size_t pending_input() const override;
  void shutdown() override;
  std::string_view kind() const override { return tls_ ? "wss" : "ws"; }
  std::string error_text() const override { return error_.empty() ? inner_->error_text() : error_; }
  std::string peer_identity() const override { return inner_->peer_identity(); }
  auth::CertificateNames peer_names() const override { return inner_->peer_names(); }

 private:
  // Steps through out[begin, end) (raw frames), moving binary payload down to
  // out[filled]; returns where it stopped.
  size_t step_through(std::span<uint8_t> out, size_t begin, size_t end, size_t& filled);
  size_t take_ready(std::span<uint8_t> out);
  void answer_close(uint16_t code);
  void fail(uint16_t code, std::string_view why);
  bool at_frame_boundary() const { return header_sent_ == header_size_ && payload_left_ == 0 && !out_partial_; }
  // Sends queued control frames; true when none is left.
  bool flush_control();
  ssize_t write_binary(const iovec* iov, int count);

  std::unique_ptr<session::Transport> inner_;
  const Settings settings_;
  const bool tls_;
  Reader reader_;
  std::string partial_;        // raw bytes of a frame not yet whole (or the early input)
  bool partial_whole_ = false; // partial_ may hold whole frames (the early input)
  std::string ready_;          // TextMessages: messages waiting for room in the caller's buffer
  size_t ready_sent_ = 0;
  std::string control_out_;    // pong and close frames waiting for a frame boundary
  bool close_sent_ = false;
  session::ReadStatus end_ = session::ReadStatus::Data;  // Closed or Error once the stream ended
  std::string error_;
  // BinaryStream output: the frame being written.
  uint8_t header_[kMaxHeaderBytes] = {};
  size_t header_size_ = 0;
  size_t header_sent_ = 0;
  uint64_t payload_left_ = 0;
  bool out_partial_ = false;  // TextMessages: the last write stopped inside a frame
};

}  // namespace tw::websocket
