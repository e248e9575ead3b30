#include "session/tcp_transport.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "io/socket.h"

namespace tw::session {

TcpTransport::~TcpTransport() { io::close_fd(fd_); }

ReadResult TcpTransport::read(std::span<uint8_t> out) {
  for (;;) {
    ssize_t n = ::read(fd_, out.data(), out.size());
    if (n > 0) return {ReadStatus::Data, static_cast<size_t>(n)};
    if (n == 0) return {ReadStatus::Closed, 0};
    if (errno == EINTR) continue;
    return {errno == EAGAIN || errno == EWOULDBLOCK ? ReadStatus::Again : ReadStatus::Error, 0};
  }
}

ssize_t TcpTransport::writev(const iovec* iov, int count) { return io::FdWriter(fd_).writev(iov, count); }

void TcpTransport::shutdown() { ::shutdown(fd_, SHUT_RDWR); }

}  // namespace tw::session
