// Test helper: a TLS server and client transport over a non-blocking
// socketpair, driven step by step on one thread (no timing involved).
#pragma once
#include <sys/socket.h>

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "session/tls_context.h"
#include "session/tls_transport.h"

namespace tw::session {

inline std::unique_ptr<TlsContext> must(Result<std::unique_ptr<TlsContext>> made) {
  EXPECT_TRUE(made.ok()) << (made.ok() ? "" : made.error().message);
  return made.ok() ? std::move(*made) : nullptr;
}

struct TlsPair {
  std::unique_ptr<TlsTransport> server;
  std::unique_ptr<TlsTransport> client;

  // `host` is what the client expects the server's certificate to name.
  TlsPair(const TlsContext& server_context, const TlsContext& client_context, const std::string& host = "127.0.0.1",
          SSL_SESSION* resume = nullptr) {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
    server = std::move(*TlsTransport::accept(server_context, fds[0]));
    client = std::move(*TlsTransport::connect(client_context, fds[1], host, resume));
  }

  // Steps both handshakes until both are done or one fails; the number of
  // steps a TLS handshake needs is small, so the bound only stops a livelock.
  bool handshake() {
    Handshake s = Handshake::WantRead, c = Handshake::WantWrite;
    for (int step = 0; step < 50; ++step) {
      c = client->handshake();
      s = server->handshake();
      if (s == Handshake::Failed || c == Handshake::Failed) return false;
      if (s == Handshake::Done && c == Handshake::Done) return true;
    }
    return false;
  }

  // Everything `to` can read now, in reads of at most `chunk` bytes.
  static std::string drain(Transport& to, size_t chunk = 16384) {
    std::string got;
    std::vector<uint8_t> buf(chunk);
    for (;;) {
      ReadResult r = to.read(buf);
      if (r.status != ReadStatus::Data) return got;
      got.append(reinterpret_cast<const char*>(buf.data()), r.bytes);
    }
  }

  static ssize_t send(Transport& from, const std::string& bytes) {
    iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
    return from.writev(&iov, 1);
  }
};

}  // namespace tw::session
