#include "testlib/raw_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace tw::testing {

namespace {
using Clock = std::chrono::steady_clock;
constexpr uint32_t kReceiveMaxFrame = 1u << 30;  // the client accepts anything well formed
constexpr size_t kControlFrameMax = wire::kHeaderSize + 16 + 2 + 0xFFFF;

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

AckReply copy_ack(const wire::Ack& ack) { return {ack.request_id, ack.code, std::string(ack.text)}; }
}  // namespace

OwnedFrame::OwnedFrame(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {
  (void)wire::split_frame(bytes_, kReceiveMaxFrame, frame_);
}

std::string describe(const OwnedFrame& f) {
  std::string s = wire::type_name(f.type());
  if (auto ack = f.as<wire::Ack>()) {
    s += " req=" + std::to_string(ack->request_id) + " code=" + wire::code_name(ack->code);
  } else if (auto err = f.as<wire::ErrorMsg>()) {
    s += std::string(" code=") + wire::code_name(err->code) + " '" + std::string(err->text) + "'";
  } else if (auto ch = f.as<wire::ChannelIntro>()) {
    s += " id=" + std::to_string(ch->channel_id) + " topic=" + std::string(ch->topic);
  } else if (auto img = f.as<wire::Image>()) {
    s += " id=" + std::to_string(img->channel_id) + " seq=" + std::to_string(img->seq) +
         " req=" + std::to_string(img->request_id);
  } else if (auto up = f.as<wire::Update>()) {
    s += " id=" + std::to_string(up->channel_id) + " seq=" + std::to_string(up->seq);
  }
  return s;
}

RawClient::~RawClient() { close(); }

RawClient::RawClient(RawClient&& other) noexcept
    : fd_(other.fd_),
      peer_closed_(other.peer_closed_),
      in_(std::move(other.in_)),
      in_start_(other.in_start_),
      kept_(std::move(other.kept_)),
      bytes_sent_(other.bytes_sent_),
      bytes_received_(other.bytes_received_) {
  other.fd_ = -1;
}

bool RawClient::connect(uint16_t port, int timeout_ms, int rcvbuf) { return open(port, timeout_ms, rcvbuf, nullptr); }

bool RawClient::connect_from(const std::string& source, uint16_t port, int timeout_ms) {
  return open(port, timeout_ms, 0, source.c_str());
}

bool RawClient::open(uint16_t port, int timeout_ms, int rcvbuf, const char* source) {
  close();
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return false;
  if (rcvbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  if (source != nullptr) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    if (::inet_pton(AF_INET, source, &from.sin_addr) != 1 ||
        ::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
      close();
      return false;
    }
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS) {
    close();
    return false;
  }
  pollfd p{fd_, POLLOUT, 0};
  int err = 0;
  socklen_t len = sizeof err;
  if (::poll(&p, 1, timeout_ms) != 1 || ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
    close();
    return false;
  }
  return true;
}

void RawClient::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  peer_closed_ = false;
  in_.clear();
  in_start_ = 0;
  kept_.clear();
}

bool RawClient::send_raw(std::span<const uint8_t> bytes, int timeout_ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  size_t sent = 0;
  while (fd_ >= 0 && sent < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      bytes_sent_ += static_cast<uint64_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, remaining_ms(deadline)) != 1) return false;
  }
  return fd_ >= 0;
}

bool RawClient::send_hello(std::string_view name, uint32_t heartbeat_ms, uint16_t min_version,
                           uint16_t max_version) {
  wire::Hello m{min_version, max_version, heartbeat_ms, name};
  return send_encoded([&](std::span<uint8_t> out) { return wire::encode(out, m); }, kControlFrameMax);
}

bool RawClient::send_subscribe(uint32_t request_id, std::string_view pattern) {
  wire::Subscribe m{request_id, pattern};
  return send_encoded([&](std::span<uint8_t> out) { return wire::encode(out, wire::MsgType::Subscribe, m); },
                      kControlFrameMax);
}

bool RawClient::send_unsubscribe(uint32_t request_id, std::string_view pattern) {
  wire::Subscribe m{request_id, pattern};
  return send_encoded([&](std::span<uint8_t> out) { return wire::encode(out, wire::MsgType::Unsubscribe, m); },
                      kControlFrameMax);
}

bool RawClient::send_snapshot(uint32_t request_id, std::string_view topic) {
  wire::Snapshot m{request_id, topic};
  return send_encoded([&](std::span<uint8_t> out) { return wire::encode(out, m); }, kControlFrameMax);
}

bool RawClient::send_heartbeat() {
  return send_encoded([](std::span<uint8_t> out) { return wire::encode_heartbeat(out); }, wire::kHeaderSize);
}

bool RawClient::register_topic(uint32_t publish_id, wire::PayloadKind kind, std::string_view topic) {
  wire::Register m{publish_id, kind, topic};
  return send_encoded([&](std::span<uint8_t> out) { return wire::encode(out, m); }, kControlFrameMax);
}

bool RawClient::publish(uint32_t publish_id, std::span<const uint8_t> payload, bool image) {
  wire::Publish m{publish_id, image, payload};
  return send_encoded([&](std::span<uint8_t> out) { return wire::encode(out, m); },
                      wire::kPublishFixedSize + payload.size());
}

std::optional<OwnedFrame> RawClient::take_buffered() {
  wire::Frame f;
  auto avail = std::span<const uint8_t>(in_).subspan(in_start_);
  if (wire::split_frame(avail, kReceiveMaxFrame, f) != wire::SplitResult::Frame) return std::nullopt;
  OwnedFrame frame(std::vector<uint8_t>(avail.begin(), avail.begin() + static_cast<ptrdiff_t>(f.size)));
  in_start_ += f.size;
  if (in_start_ == in_.size()) {
    in_.clear();
    in_start_ = 0;
  }
  return frame;
}

bool RawClient::fill(int timeout_ms) {
  if (fd_ < 0 || peer_closed_) return false;
  if (in_start_ > 0 && in_start_ > in_.size() / 2) {
    in_.erase(in_.begin(), in_.begin() + static_cast<ptrdiff_t>(in_start_));
    in_start_ = 0;
  }
  uint8_t buf[64 * 1024];
  for (;;) {
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n > 0) {
      in_.insert(in_.end(), buf, buf + n);
      bytes_received_ += static_cast<uint64_t>(n);
      return true;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      peer_closed_ = true;  // end of stream, or a reset: either way the broker closed it
      return false;
    }
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) != 1) return false;
  }
}

std::optional<OwnedFrame> RawClient::next(int timeout_ms) {
  if (!kept_.empty()) {
    OwnedFrame f = std::move(kept_.front());
    kept_.pop_front();
    return f;
  }
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (auto f = take_buffered()) return f;
    if (!fill(remaining_ms(deadline))) return std::nullopt;
  }
}

std::optional<OwnedFrame> RawClient::next_message(int timeout_ms) {
  return next_of_type_if([](wire::MsgType t) { return t != wire::MsgType::Heartbeat; }, timeout_ms);
}

std::optional<OwnedFrame> RawClient::next_of_type(wire::MsgType type, int timeout_ms) {
  return next_of_type_if([type](wire::MsgType t) { return t == type; }, timeout_ms);
}

std::optional<OwnedFrame> RawClient::hello(std::string_view name, uint32_t heartbeat_ms) {
  if (!send_hello(name, heartbeat_ms)) return std::nullopt;
  return next_message();
}

std::optional<OwnedFrame> RawClient::login(std::string_view name, std::string_view user, std::string_view password) {
  wire::Hello m;
  m.client_name = name;
  m.credentials = true;
  m.user = user;
  m.password = password;
  if (!send_encoded([&](std::span<uint8_t> out) { return wire::encode(out, m); }, kControlFrameMax)) return std::nullopt;
  return next_message();
}

std::optional<AckReply> RawClient::read_until_ack(uint32_t request_id, int timeout_ms, const Claim& claim) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::deque<OwnedFrame> unclaimed;
  std::optional<AckReply> reply;
  while (!reply) {
    auto f = next(remaining_ms(deadline));
    if (!f) break;
    auto ack = f->as<wire::Ack>();
    if (ack && ack->request_id == request_id) {
      reply = copy_ack(*ack);
    } else if (!claim || !claim(*f, unclaimed)) {
      unclaimed.push_back(std::move(*f));
    }
  }
  keep_in_front(unclaimed);  // still to be read, ahead of anything newer
  return reply;
}

std::optional<AckReply> RawClient::await_ack(uint32_t request_id, int timeout_ms) {
  return read_until_ack(request_id, timeout_ms, nullptr);
}

std::optional<AckReply> RawClient::subscribe(uint32_t request_id, std::string_view pattern, int timeout_ms) {
  if (!send_subscribe(request_id, pattern)) return std::nullopt;
  return await_ack(request_id, timeout_ms);
}

std::optional<AckReply> RawClient::unsubscribe(uint32_t request_id, std::string_view pattern, int timeout_ms) {
  if (!send_unsubscribe(request_id, pattern)) return std::nullopt;
  return await_ack(request_id, timeout_ms);
}

// The broker answers a found snapshot with CHANNEL, IMAGE(request_id) and
// then the ACK; the IMAGE is told from stream images by its request id, and
// its CHANNEL is the one right before it.
SnapshotReply RawClient::snapshot(uint32_t request_id, std::string_view topic, int timeout_ms) {
  SnapshotReply reply;
  if (!send_snapshot(request_id, topic)) return reply;
  reply.ack = read_until_ack(request_id, timeout_ms, [&](OwnedFrame& f, std::deque<OwnedFrame>& unclaimed) {
    auto image = f.as<wire::Image>();
    if (!image || image->request_id != request_id || unclaimed.empty() ||
        unclaimed.back().type() != wire::MsgType::Channel) {
      return false;
    }
    reply.channel = std::move(unclaimed.back());
    unclaimed.pop_back();
    reply.image = std::move(f);
    return true;
  });
  return reply;
}

std::optional<wire::Code> RawClient::wait_closed_with(int timeout_ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto f = next(remaining_ms(deadline));
    if (f) {
      if (auto err = f->as<wire::ErrorMsg>()) goodbye_code_ = err->code;
      continue;
    }
    if (peer_closed_) return goodbye_code_;
    if (remaining_ms(deadline) == 0) return std::nullopt;
  }
}

}  // namespace tw::testing
