#include "client/tcp_socket.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tw::client {

namespace {

Error errno_error(const char* what, int err) { return Error{std::string(what) + ": " + std::strerror(err)}; }

Result<int> connect_one(const addrinfo* ai) {
  int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
  if (fd < 0) return errno_error("socket", errno);
  int one = 1;
  // Market data is latency-bound and we batch writes ourselves: Nagle only adds delay.
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
    int err = errno;
    ::close(fd);
    return errno_error("connect", err);
  }
  return fd;
}

}  // namespace

Result<int> start_connect(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &list);
  if (rc != 0) return Error{"cannot resolve " + host + ": " + ::gai_strerror(rc)};
  Result<int> result = Error{"no address for " + host};
  for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    result = connect_one(ai);
    if (result.ok()) break;
  }
  ::freeaddrinfo(list);
  return result;
}

Status finish_connect(int fd) {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno_error("getsockopt", errno);
  if (err != 0) return errno_error("connect", err);
  return Ok{};
}

void close_fd(int fd) {
  if (fd >= 0) ::close(fd);
}

}  // namespace tw::client
