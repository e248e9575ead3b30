// TcpTransport: a session's bytes straight over the socket, with one read(2)
// or writev(2) per call.
#pragma once
#include "session/transport.h"

namespace tw::session {

class TcpTransport final : public Transport {
 public:
  explicit TcpTransport(int fd) : fd_(fd) {}
  ~TcpTransport() override;
  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;

  int fd() const override { return fd_; }
  Handshake handshake() override { return Handshake::Done; }
  ReadResult read(std::span<uint8_t> out) override;
  ssize_t writev(const iovec* iov, int count) override;
  void shutdown() override;
  std::string_view kind() const override { return "tcp"; }

 private:
  int fd_;
};

}  // namespace tw::session
