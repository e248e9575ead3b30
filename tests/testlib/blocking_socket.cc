#include "testlib/blocking_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace tw::testing {

BlockingSocket::BlockingSocket(uint16_t port, int wait_ms) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval tv{wait_ms / 1000, (wait_ms % 1000) * 1000};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
}

BlockingSocket::~BlockingSocket() { ::close(fd_); }

bool BlockingSocket::send(std::string_view bytes) {
  return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
}

const std::string& BlockingSocket::read_until(std::string_view text) {
  while (buffer_.find(text) == std::string::npos && !closed_ && fill()) {
  }
  return buffer_;
}

bool BlockingSocket::read_to_close() {
  while (!closed_) {
    if (!fill()) return false;
  }
  return true;
}

// False when the wait ended with nothing read.
bool BlockingSocket::fill() {
  char chunk[4096];
  const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
  if (n > 0) buffer_.append(chunk, static_cast<size_t>(n));
  if (n == 0 || (n < 0 && errno == ECONNRESET)) closed_ = true;
  return n >= 0 || errno == ECONNRESET;
}

}  // namespace tw::testing
