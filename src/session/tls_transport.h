// TlsTransport: a session's bytes through a non-blocking OpenSSL connection
// on the socket. The handshake runs on the session's loop, one step per
// readiness event (handshake() returns what it waits for).
//
// Writes: writev copies the caller's bytes into a bounded staging buffer
// (one contiguous run makes few, full TLS records) and SSL_write_ex sends it.
// Only bytes whose records reached the socket are reported taken; when the
// socket fills, the rest stays staged, and because the caller still holds
// those same bytes at the front of its queue it keeps asking for EPOLLOUT and
// calls writev again, which first retries the staging (OpenSSL requires the
// retry to present the same bytes). Reporting staged bytes as taken would
// strand them: a session with an empty queue never calls writev.
//
// A read that must write first (a TLS 1.3 KeyUpdate answer while the socket
// is full; renegotiation is off) reports Again: OpenSSL sends the held bytes
// on the next SSL_read or SSL_write, and both sides heartbeat, so the session
// is woken within one heartbeat. It is not reported as pending output: the
// session would ask for EPOLLOUT without anything it could call to flush.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tickwire/base/result.h"
#include "session/tls_context.h"
#include "session/transport.h"

using SSL_SESSION = struct ssl_session_st;

namespace tw::session {

class TlsTransport final : public Transport {
 public:
  static constexpr size_t kStagingBytes = 64u << 10;

  // The broker's side of an accepted, non-blocking fd. Owns fd from here on,
  // also on failure (it is closed).
  static Result<std::unique_ptr<TlsTransport>> accept(const TlsContext& context, int fd);
  // The client's side: the broker's certificate must name `host` (a DNS name
  // or an IP address). `resume` (may be null) offers an earlier session.
  static Result<std::unique_ptr<TlsTransport>> connect(const TlsContext& context, int fd, const std::string& host,
                                                       SSL_SESSION* resume = nullptr);
  ~TlsTransport() override;
  TlsTransport(const TlsTransport&) = delete;
  TlsTransport& operator=(const TlsTransport&) = delete;

  int fd() const override { return fd_; }
  Handshake handshake() override;
  ReadResult read(std::span<uint8_t> out) override;
  ssize_t writev(const iovec* iov, int count) override;
  size_t pending_input() const override;
  void shutdown() override;
  std::string_view kind() const override { return "tls"; }
  std::string error_text() const override { return error_; }
  std::string peer_identity() const override;
  auth::CertificateNames peer_names() const override;

  // Bytes staged for OpenSSL but not yet on the socket (they are still the caller's).
  size_t staged_bytes() const { return end_ - begin_; }
  // Whether the handshake resumed an earlier session instead of a full key exchange.
  bool session_reused() const;
  // The negotiated cipher suite ("TLS_AES_128_GCM_SHA256"), "" before the handshake.
  std::string cipher() const;
  // The session to offer on the next connection (client side); null if none. Caller frees (SSL_SESSION_free).
  SSL_SESSION* take_session() const;

 private:
  TlsTransport(int fd, SSL* ssl);
  size_t stage(const iovec* iov, int count, size_t skip);
  bool blocked_or_fail(int rc);
  // Why SSL_read stopped: Again (wants the socket), Closed, or Error (recorded).
  ReadStatus read_end(int ssl_error);
  void record_failure(int ssl_error);

  int fd_;
  SSL* ssl_;
  bool handshaken_ = false;
  std::string error_;
  ReadStatus deferred_ = ReadStatus::Data;  // an end that followed data, reported on the next read
  std::vector<uint8_t> staging_;
  size_t begin_ = 0;  // staging_[begin_, end_) is offered to OpenSSL, not yet on the socket
  size_t end_ = 0;
};

}  // namespace tw::session
