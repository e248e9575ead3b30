#include "websocket/transport.h"

#include <climits>
#include <cstring>

namespace tw::websocket {

namespace {
constexpr size_t kMaxControlBacklog = 1024;  // pongs past this are dropped (RFC 6455 5.5.3 allows answering the last)
// The caller's iovecs taken per call (io::OutQueue offers at most 256); on
// the stack with the header's, so a connection holds no iovec array.
constexpr int kMaxIov = 256;
}  // namespace

Transport::Transport(std::unique_ptr<session::Transport> inner, Settings settings, std::string early_input)
    : inner_(std::move(inner)),
      settings_(settings),
      tls_(inner_->kind() == "tls"),
      reader_({Role::Server, settings.max_message,
               settings.framing == Framing::BinaryStream ? Opcode::Binary : Opcode::Text}),
      partial_(std::move(early_input)),
      partial_whole_(!partial_.empty()) {}

size_t Transport::pending_input() const {
  return inner_->pending_input() + (partial_whole_ ? partial_.size() : 0) + (ready_.size() - ready_sent_);
}

size_t Transport::take_ready(std::span<uint8_t> out) {
  const size_t n = std::min(out.size(), ready_.size() - ready_sent_);
  std::memcpy(out.data(), ready_.data() + ready_sent_, n);
  ready_sent_ += n;
  if (ready_sent_ == ready_.size()) {
    ready_.clear();
    ready_sent_ = 0;
  }
  return n;
}

// Raw frame bytes are read into the caller's buffer after what it already
// holds, unmasked there, and binary payload is moved down over the headers:
// no buffer of the transport's own holds message bytes, so an idle
// connection costs only the partial header it may have kept.
session::ReadResult Transport::read(std::span<uint8_t> out) {
  if (end_ != session::ReadStatus::Data) return {end_, 0};
  size_t filled = take_ready(out);
  while (filled < out.size() && end_ == session::ReadStatus::Data) {
    size_t end = filled;
    const size_t kept = std::min(partial_.size(), out.size() - filled);
    std::memcpy(out.data() + end, partial_.data(), kept);
    end += kept;
    partial_.erase(0, kept);
    const bool had_whole = partial_whole_;
    partial_whole_ = false;
    session::ReadStatus status = session::ReadStatus::Data;
    if (end < out.size() && partial_.empty()) {
      const session::ReadResult r = inner_->read(out.subspan(end));
      status = r.status;
      end += r.bytes;
    }
    const size_t stop = step_through(out, filled, end, filled);
    partial_.insert(0, reinterpret_cast<const char*>(out.data() + stop), end - stop);
    filled += take_ready(out.subspan(filled));
    if (status == session::ReadStatus::Closed || status == session::ReadStatus::Error) {
      if (end_ == session::ReadStatus::Data) end_ = status;
    }
    if (status != session::ReadStatus::Data && !had_whole) break;  // Again: nothing more now
  }
  if (filled > 0) return {session::ReadStatus::Data, filled};
  return {end_ == session::ReadStatus::Data ? session::ReadStatus::Again : end_, 0};
}

size_t Transport::step_through(std::span<uint8_t> out, size_t begin, size_t end, size_t& filled) {
  size_t pos = begin;
  while (pos < end && end_ == session::ReadStatus::Data) {
    const Reader::Step step = reader_.next(out.subspan(pos, end - pos));
    if (step.kind == Reader::Kind::NeedMore && step.consumed == 0) break;
    pos += step.consumed;
    switch (step.kind) {
      case Reader::Kind::NeedMore:
        break;
      case Reader::Kind::Pong:
        // TextMessages: an empty line, so a page that only listens, answering
        // the stream session's pings, is input that keeps it from going idle.
        if (settings_.framing == Framing::TextMessages) ready_.push_back('\n');
        break;
      case Reader::Kind::Data:
        if (settings_.framing == Framing::BinaryStream) {
          std::memmove(out.data() + filled, step.payload.data(), step.payload.size());
          filled += step.payload.size();
        } else {
          const size_t at = ready_.size();
          ready_.append(reinterpret_cast<const char*>(step.payload.data()), step.payload.size());
          for (size_t i = at; i < ready_.size(); ++i) {
            if (ready_[i] == '\n') ready_[i] = ' ';
          }
          ready_.push_back('\n');
        }
        break;
      case Reader::Kind::Ping:
        if (control_out_.size() < kMaxControlBacklog) {
          control_out_ += encode_frame(Opcode::Pong,
                                       {reinterpret_cast<const char*>(step.payload.data()), step.payload.size()});
        }
        if (at_frame_boundary()) flush_control();
        break;
      case Reader::Kind::Close:
        answer_close(step.close_code);
        end_ = session::ReadStatus::Closed;
        break;
      case Reader::Kind::Error:
        fail(step.close_code, step.error);
        break;
    }
  }
  return pos;
}

void Transport::answer_close(uint16_t code) {
  if (close_sent_) return;
  close_sent_ = true;
  // Echo the peer's code (section 5.5.1); a close without one gets an empty close.
  const std::string payload = code == static_cast<uint16_t>(CloseCode::NoStatus)
                                  ? std::string()
                                  : close_payload(static_cast<CloseCode>(code), "");
  control_out_ += encode_frame(Opcode::Close, payload);
  if (at_frame_boundary()) flush_control();
}

void Transport::fail(uint16_t code, std::string_view why) {
  error_ = "websocket: " + std::string(why);
  end_ = session::ReadStatus::Error;
  if (close_sent_) return;
  close_sent_ = true;
  control_out_ += encode_frame(Opcode::Close, close_payload(static_cast<CloseCode>(code), why));
  if (at_frame_boundary()) flush_control();
}

bool Transport::flush_control() {
  while (!control_out_.empty()) {
    iovec iov{control_out_.data(), control_out_.size()};
    const ssize_t n = inner_->writev(&iov, 1);
    if (n <= 0) return false;
    control_out_.erase(0, static_cast<size_t>(n));
  }
  return true;
}

ssize_t Transport::writev(const iovec* iov, int count) {
  if (close_sent_ && at_frame_boundary()) {
    // Nothing may follow a close frame (RFC 6455 5.5.1): what the session
    // still writes (its goodbye) is dropped, reported as taken so it can finish.
    if (!flush_control()) return 0;
    size_t total = 0;
    for (int i = 0; i < count; ++i) total += iov[i].iov_len;
    return static_cast<ssize_t>(total);
  }
  if (at_frame_boundary() && !flush_control()) return 0;  // a control frame is half-written: it goes first
  if (settings_.framing == Framing::BinaryStream) return write_binary(iov, count);
  size_t total = 0;
  for (int i = 0; i < count; ++i) total += iov[i].iov_len;
  const ssize_t n = inner_->writev(iov, count);
  if (n < 0) return n;
  out_partial_ = static_cast<size_t>(n) < total;
  if (!out_partial_ && !control_out_.empty()) flush_control();
  return n;
}

// One binary frame per call: [header][the caller's iovecs], or the rest of a
// frame begun by an earlier call that the socket did not take whole.
ssize_t Transport::write_binary(const iovec* iov, int count) {
  count = std::min(count, kMaxIov);
  size_t total = 0;
  for (int i = 0; i < count; ++i) total += iov[i].iov_len;
  if (header_sent_ == header_size_ && payload_left_ == 0) {
    if (total == 0) return 0;
    header_size_ = encode_header(header_, Opcode::Binary, true, total);
    header_sent_ = 0;
    payload_left_ = total;
  }
  iovec frame[kMaxIov + 1];
  int used = 0;
  if (header_sent_ < header_size_) frame[used++] = {header_ + header_sent_, header_size_ - header_sent_};
  uint64_t room = payload_left_;
  for (int i = 0; i < count && room > 0; ++i) {
    const size_t len = static_cast<size_t>(std::min<uint64_t>(iov[i].iov_len, room));
    frame[used++] = {iov[i].iov_base, len};
    room -= len;
  }
  const ssize_t n = inner_->writev(frame, used);
  if (n < 0) return n;
  const size_t header_part = std::min(static_cast<size_t>(n), header_size_ - header_sent_);
  header_sent_ += header_part;
  const size_t payload = static_cast<size_t>(n) - header_part;
  payload_left_ -= payload;
  if (at_frame_boundary() && !control_out_.empty()) flush_control();
  return static_cast<ssize_t>(payload);
}

// A going-away close when the session ends the connection, unless one was
// already exchanged; then the inner transport's own orderly end.
void Transport::shutdown() {
  if (!close_sent_ && at_frame_boundary()) {
    close_sent_ = true;
    control_out_ += encode_frame(Opcode::Close, close_payload(CloseCode::GoingAway, "server closing the connection"));
  }
  if (at_frame_boundary()) flush_control();
  inner_->shutdown();
}

}  // namespace tw::websocket
