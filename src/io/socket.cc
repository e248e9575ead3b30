#include "io/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tw::io {

namespace {

std::string where(const std::string& host, uint16_t port) {
  return host + ":" + std::to_string(port);
}

Result<addrinfo*> resolve(const std::string& host, uint16_t port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  addrinfo* res = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0) return Error{"cannot resolve " + where(host, port) + ": " + gai_strerror(rc)};
  return res;
}

}  // namespace

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void close_fd(int fd) {
  if (fd >= 0) ::close(fd);
}

void end_connection(int fd) {
  ::shutdown(fd, SHUT_WR);
  uint8_t sink[16384];
  for (int i = 0; i < 16; ++i) {  // at most 256 KiB: a flooding peer may still get its reset
    if (::recv(fd, sink, sizeof sink, MSG_DONTWAIT) <= 0) return;
  }
}

Result<int> listen_tcp(const std::string& host, uint16_t port, int backlog) {
  auto res = resolve(host, port, true);
  if (!res) return Error{"cannot listen on " + where(host, port) + ": " + res.error().message};
  addrinfo* ai = *res;
  int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
  if (fd < 0) {
    ::freeaddrinfo(ai);
    return Error{"cannot listen on " + where(host, port) + ": " + std::strerror(errno)};
  }
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int rc = ::bind(fd, ai->ai_addr, ai->ai_addrlen);
  if (rc == 0) rc = ::listen(fd, backlog);
  int err = errno;
  ::freeaddrinfo(ai);
  if (rc != 0) {
    ::close(fd);
    return Error{"cannot listen on " + where(host, port) + ": " + std::strerror(err)};
  }
  return fd;
}

Result<int> connect_tcp(const std::string& host, uint16_t port, int timeout_ms) {
  auto res = resolve(host, port, false);
  if (!res) return Error{res.error().message};
  addrinfo* ai = *res;
  int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
  if (fd < 0) {
    ::freeaddrinfo(ai);
    return Error{std::string("socket: ") + std::strerror(errno)};
  }
  int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
  ::freeaddrinfo(ai);
  if (rc != 0 && errno != EINPROGRESS) {
    int err = errno;
    ::close(fd);
    return Error{"cannot connect to " + where(host, port) + ": " + std::strerror(err)};
  }
  if (rc != 0) {
    pollfd p{fd, POLLOUT, 0};
    int n = ::poll(&p, 1, timeout_ms);
    int err = 0;
    socklen_t len = sizeof err;
    if (n <= 0) {
      err = n == 0 ? ETIMEDOUT : errno;
    } else {
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    }
    if (err != 0) {
      ::close(fd);
      return Error{"cannot connect to " + where(host, port) + ": " + std::strerror(err)};
    }
  }
  set_nodelay(fd);
  return fd;
}

int accept_nonblocking(int listen_fd, std::string* peer) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) return -1;
  set_nodelay(fd);
  if (peer) {
    char host[INET6_ADDRSTRLEN] = "?";
    uint16_t port = 0;
    if (addr.ss_family == AF_INET) {
      auto* a = reinterpret_cast<sockaddr_in*>(&addr);
      ::inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
      port = ntohs(a->sin_port);
    } else if (addr.ss_family == AF_INET6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
      ::inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
      port = ntohs(a->sin6_port);
    }
    *peer = std::string(host) + ":" + std::to_string(port);
  }
  return fd;
}

uint16_t local_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return 0;
}

}  // namespace tw::io
