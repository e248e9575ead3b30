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

// sendmsg rather than writev(2): the same gather write, but a peer that went
// away is EPIPE, not a SIGPIPE that kills a process embedding the broker (the
// in-process test brokers; tickwired itself ignores SIGPIPE).
ssize_t TcpTransport::writev(const iovec* iov, int count) {
  msghdr message{};
  message.msg_iov = const_cast<iovec*>(iov);
  message.msg_iovlen = static_cast<size_t>(count);
  for (;;) {
    ssize_t written = ::sendmsg(fd_, &message, MSG_NOSIGNAL);
    if (written >= 0) return written;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  }
}

void TcpTransport::shutdown() { io::end_connection(fd_); }

}  // namespace tw::session
