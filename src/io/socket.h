// Thin, typed wrappers over the BSD socket calls the loops use.
#pragma once
#include <cstdint>
#include <string>

#include "tickwire/base/result.h"

namespace tw::io {

// Binds and listens on host:port (IPv4 or IPv6 literal, or "localhost"),
// non-blocking, SO_REUSEADDR. Errors read "cannot listen on H:P: <strerror>".
Result<int> listen_tcp(const std::string& host, uint16_t port, int backlog = 1024);
// Connects (blocking, with timeout) and returns a non-blocking socket with TCP_NODELAY.
Result<int> connect_tcp(const std::string& host, uint16_t port, int timeout_ms);
// accept4 with SOCK_NONBLOCK|SOCK_CLOEXEC and TCP_NODELAY; -1 when nothing is pending.
int accept_nonblocking(int listen_fd, std::string* peer = nullptr);
uint16_t local_port(int fd);
void set_nodelay(int fd);
void close_fd(int fd);
// The orderly end of a connection the broker ends: FIN after what was written
// (the goodbye), then what the peer already sent is read and dropped (a
// bounded, non-blocking drain), so that closing does not answer with a reset,
// which may make the peer's kernel drop the goodbye unread.
void end_connection(int fd);

}  // namespace tw::io
