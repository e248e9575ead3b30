#include "perf/raw_stream.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

namespace tw::perf {

namespace {

constexpr size_t kReadChunk = 256u << 10;

Error errno_error(const std::string& what) { return Error{what + ": " + std::strerror(errno)}; }

}  // namespace

Status RawStream::connect(const std::string& host, uint16_t port, int timeout_ms) {
  close();
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || found == nullptr)
    return Error{"cannot resolve " + host};
  sockaddr_in addr = *reinterpret_cast<sockaddr_in*>(found->ai_addr);
  freeaddrinfo(found);
  addr.sin_port = htons(port);

  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return errno_error("socket");
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::string target = host + ":" + std::to_string(port);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS) {
    Error e = errno_error("connect to " + target);
    close();
    return e;
  }
  pollfd ready{fd_, POLLOUT, 0};
  int error = 0;
  socklen_t len = sizeof error;
  if (::poll(&ready, 1, timeout_ms) != 1 || getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0) {
    close();
    return Error{"connect to " + target + ": " + (error != 0 ? std::strerror(error) : "timed out")};
  }
  return Ok{};
}

void RawStream::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  out_.clear();
  out_sent_ = 0;
  in_start_ = in_end_ = 0;
}

Status RawStream::flush() {
  if (fd_ < 0) return Error{"not connected"};
  while (out_sent_ < out_.size()) {
    ssize_t n = ::send(fd_, out_.data() + out_sent_, out_.size() - out_sent_, MSG_NOSIGNAL);
    if (n > 0) {
      out_sent_ += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (out_sent_ >= out_.size() / 2) {  // keep appends from growing the buffer forever
        out_.erase(out_.begin(), out_.begin() + static_cast<ptrdiff_t>(out_sent_));
        out_sent_ = 0;
      }
      return Ok{};
    }
    return errno_error("send");
  }
  out_.clear();
  out_sent_ = 0;
  return Ok{};
}

Result<bool> RawStream::fill(int timeout_ms) {
  if (fd_ < 0) return Error{"not connected"};
  if (Status s = flush(); !s) return s.error();
  if (timeout_ms > 0) {
    pollfd ready{fd_, static_cast<short>(POLLIN | (pending_output() > 0 ? POLLOUT : 0)), 0};
    ::poll(&ready, 1, timeout_ms);
    if (Status s = flush(); !s) return s.error();
  }
  // Unparsed bytes move to the front; the buffer grows only when a message
  // larger than it is still incomplete.
  if (in_start_ > 0) {
    std::memmove(in_.data(), in_.data() + in_start_, in_end_ - in_start_);
    in_end_ -= in_start_;
    in_start_ = 0;
  }
  if (in_.size() - in_end_ < kReadChunk / 2) in_.resize(std::max(in_.size() * 2, kReadChunk));
  ssize_t n = ::recv(fd_, in_.data() + in_end_, in_.size() - in_end_, 0);
  if (n > 0) in_end_ += static_cast<size_t>(n);
  if (n > 0) return true;
  if (n == 0) return Error{"connection closed by the server"};
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
  return errno_error("recv");
}

}  // namespace tw::perf
