#include "session/tls_transport.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "io/socket.h"

namespace tw::session {
namespace {

bool is_ip_address(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// Names the broker's certificate must carry: an IP address is checked
// against the certificate's IP entries, a name against its DNS entries (and
// sent as SNI, so a proxy in front can pick the right certificate).
bool expect_host(SSL* ssl, const std::string& host) {
  if (host.empty()) return true;
  if (is_ip_address(host)) return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str()) == 1;
  return SSL_set1_host(ssl, host.c_str()) == 1 && SSL_set_tlsext_host_name(ssl, host.c_str()) == 1;
}

// OpenSSL's socket BIO writes with write(2): a peer gone away would raise
// SIGPIPE, which kills a client application that did not ignore it. This BIO
// is the socket BIO with send(MSG_NOSIGNAL) instead (EPIPE is an error code).
int send_without_sigpipe(BIO* bio, const char* data, int len) {
  int fd = -1;
  BIO_get_fd(bio, &fd);
  errno = 0;
  ssize_t n = ::send(fd, data, static_cast<size_t>(len), MSG_NOSIGNAL);
  BIO_clear_retry_flags(bio);
  if (n <= 0 && BIO_sock_should_retry(static_cast<int>(n))) BIO_set_retry_write(bio);
  return static_cast<int>(n);
}

const BIO_METHOD* socket_method() {
  static BIO_METHOD* method = [] {
    const BIO_METHOD* base = BIO_s_socket();
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
                                 "socket without SIGPIPE");
    BIO_meth_set_write(m, send_without_sigpipe);
    BIO_meth_set_read(m, BIO_meth_get_read(base));
    BIO_meth_set_puts(m, BIO_meth_get_puts(base));
    BIO_meth_set_ctrl(m, BIO_meth_get_ctrl(base));
    BIO_meth_set_create(m, BIO_meth_get_create(base));
    BIO_meth_set_destroy(m, BIO_meth_get_destroy(base));
    return m;
  }();
  return method;
}

// The SSL reads and writes fd through the BIO above; the fd stays the transport's to close.
bool attach_socket(SSL* ssl, int fd) {
  BIO* bio = BIO_new(socket_method());
  if (!bio) return false;
  BIO_set_fd(bio, fd, BIO_NOCLOSE);
  SSL_set_bio(ssl, bio, bio);
  return true;
}

// Record-layer errors that mean the first bytes were not a TLS record at all.
bool looks_like_plaintext(int reason) {
  return reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_HTTP_REQUEST ||
         reason == SSL_R_HTTPS_PROXY_REQUEST || reason == SSL_R_PACKET_LENGTH_TOO_LONG ||
         reason == SSL_R_UNKNOWN_PROTOCOL;
}

}  // namespace

Result<std::unique_ptr<TlsTransport>> TlsTransport::accept(const TlsContext& context, int fd) {
  SSL* ssl = context.new_ssl();
  if (!ssl || !attach_socket(ssl, fd)) {
    SSL_free(ssl);
    io::close_fd(fd);
    return Error{"cannot start TLS: " + take_openssl_error("out of memory")};
  }
  SSL_set_accept_state(ssl);
  return std::unique_ptr<TlsTransport>(new TlsTransport(fd, ssl));
}

Result<std::unique_ptr<TlsTransport>> TlsTransport::connect(const TlsContext& context, int fd,
                                                           const std::string& host, SSL_SESSION* resume) {
  SSL* ssl = context.new_ssl();
  if (!ssl || !attach_socket(ssl, fd) || !expect_host(ssl, host) || (resume && SSL_set_session(ssl, resume) != 1)) {
    SSL_free(ssl);
    io::close_fd(fd);
    return Error{"cannot start TLS to " + host + ": " + take_openssl_error("out of memory")};
  }
  SSL_set_connect_state(ssl);
  return std::unique_ptr<TlsTransport>(new TlsTransport(fd, ssl));
}

TlsTransport::TlsTransport(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}

TlsTransport::~TlsTransport() {
  SSL_free(ssl_);
  io::close_fd(fd_);
}

Handshake TlsTransport::handshake() {
  if (handshaken_) return Handshake::Done;
  int rc = SSL_do_handshake(ssl_);
  if (rc == 1) {
    handshaken_ = true;
    return Handshake::Done;
  }
  int error = SSL_get_error(ssl_, rc);
  if (error == SSL_ERROR_WANT_READ) return Handshake::WantRead;
  if (error == SSL_ERROR_WANT_WRITE) return Handshake::WantWrite;
  record_failure(error);
  return Handshake::Failed;
}

// Turns OpenSSL's error queue into the reason an operator can act on.
void TlsTransport::record_failure(int ssl_error) {
  const unsigned long first = ERR_peek_error();
  const int reason = ERR_GET_LIB(first) == ERR_LIB_SSL ? ERR_GET_REASON(first) : 0;
  if (first == 0 && (ssl_error == SSL_ERROR_SYSCALL || ssl_error == SSL_ERROR_ZERO_RETURN)) {
    // errno may be left over from an earlier EAGAIN: only a real socket error names it.
    const bool socket_error = ssl_error == SSL_ERROR_SYSCALL && errno != 0 && errno != EAGAIN && errno != EWOULDBLOCK;
    error_ = socket_error ? std::string(std::strerror(errno)) : "the peer closed the connection";
  } else if (reason == SSL_R_CERTIFICATE_VERIFY_FAILED) {
    error_ = std::string("certificate verify failed: ") + X509_verify_cert_error_string(SSL_get_verify_result(ssl_));
  } else if (reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE) {
    error_ = "peer did not return a certificate";
  } else if (looks_like_plaintext(reason)) {
    error_ = take_openssl_error("not TLS") + " (a plaintext client?)";
  } else {
    error_ = take_openssl_error("TLS error " + std::to_string(ssl_error));
  }
  ERR_clear_error();
}

// As read(2) does: everything available, up to out.size(). One SSL_read_ex
// returns one record at most; a session that took one record per loop turn
// would fan out one publisher batch per turn and write every subscriber once
// per batch (measured: a fifth of plaintext's W1 capacity). It stops when
// OpenSSL holds nothing more (its read-ahead took what the socket had):
// asking again would cost a read(2) that finds the socket empty, and bytes
// that arrive later raise the next readiness event. An end or a failure
// after some data is reported on the next call.
ReadResult TlsTransport::read(std::span<uint8_t> out) {
  if (deferred_ != ReadStatus::Data) return {deferred_, 0};
  size_t total = 0;
  while (total < out.size()) {
    size_t got = 0;
    if (SSL_read_ex(ssl_, out.data() + total, out.size() - total, &got) == 1) {
      total += got;
      if (!SSL_has_pending(ssl_)) break;
      continue;
    }
    const ReadStatus end = read_end(SSL_get_error(ssl_, 0));
    if (end == ReadStatus::Again) break;
    if (total == 0) return {end, 0};
    deferred_ = end;
    break;
  }
  return total > 0 ? ReadResult{ReadStatus::Data, total} : ReadResult{ReadStatus::Again, 0};
}

ReadStatus TlsTransport::read_end(int ssl_error) {
  switch (ssl_error) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:  // see the class comment
      return ReadStatus::Again;
    case SSL_ERROR_ZERO_RETURN:
      return ReadStatus::Closed;
    default:
      record_failure(ssl_error);
      return ReadStatus::Error;
  }
}

// Copies the caller's bytes after the first `skip` into the empty staging buffer.
size_t TlsTransport::stage(const iovec* iov, int count, size_t skip) {
  staging_.resize(kStagingBytes);
  size_t filled = 0;
  for (int i = 0; i < count && filled < kStagingBytes; ++i) {
    size_t len = iov[i].iov_len;
    if (skip >= len) {
      skip -= len;
      continue;
    }
    size_t n = std::min(len - skip, kStagingBytes - filled);
    std::memcpy(staging_.data() + filled, static_cast<const uint8_t*>(iov[i].iov_base) + skip, n);
    filled += n;
    skip = 0;
  }
  return filled;
}

// False when the write failed for good; true when the socket is only full.
bool TlsTransport::blocked_or_fail(int rc) {
  int error = SSL_get_error(ssl_, rc);
  if (error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ) return true;
  record_failure(error);
  return false;
}

ssize_t TlsTransport::writev(const iovec* iov, int count) {
  size_t offered = 0;
  for (int i = 0; i < count; ++i) offered += iov[i].iov_len;
  size_t taken = 0;  // the caller's bytes now on the socket; staged ones are its first bytes
  for (;;) {
    if (begin_ == end_) {
      begin_ = 0;
      end_ = stage(iov, count, taken);
      if (end_ == 0) break;
    }
    size_t sent = 0;
    int rc = SSL_write_ex(ssl_, staging_.data() + begin_, end_ - begin_, &sent);
    if (rc != 1) {
      if (!blocked_or_fail(rc)) return -1;
      break;
    }
    begin_ += sent;
    taken += sent;
  }
  // A caller that offers other bytes than it was told are staged (a last
  // goodbye frame after an unfinished flush) must not be told more were taken.
  return static_cast<ssize_t>(std::min(taken, offered));
}

// SSL_pending counts decrypted bytes of the current record only; with
// read-ahead, whole records may wait undecrypted inside OpenSSL, which no
// readiness event announces either (SSL_has_pending).
size_t TlsTransport::pending_input() const {
  const int decrypted = SSL_pending(ssl_);
  return decrypted > 0 ? static_cast<size_t>(decrypted) : static_cast<size_t>(SSL_has_pending(ssl_));
}

void TlsTransport::shutdown() {
  if (handshaken_) (void)SSL_shutdown(ssl_);  // one close_notify; the peer's answer is not awaited
  ERR_clear_error();
  io::end_connection(fd_);
}

std::string TlsTransport::peer_identity() const {
  X509* cert = SSL_get0_peer_certificate(ssl_);
  if (!cert) return {};
  BIO* out = BIO_new(BIO_s_mem());
  X509_NAME_print_ex(out, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
  char* text = nullptr;
  long len = BIO_get_mem_data(out, &text);
  std::string subject(text, static_cast<size_t>(len));
  BIO_free(out);
  return subject;
}

namespace {

// One subjectAltName entry, by kind; nullopt for kinds that name no one (otherName, X.400, ...).
std::optional<auth::CertificateName> alt_name(const GENERAL_NAME& name) {
  using Kind = auth::CertificateName::Kind;
  auto text = [](const ASN1_STRING* s) {
    return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)), static_cast<size_t>(ASN1_STRING_length(s)));
  };
  switch (name.type) {
    case GEN_DNS: return auth::CertificateName{Kind::Dns, text(name.d.dNSName)};
    case GEN_EMAIL: return auth::CertificateName{Kind::Email, text(name.d.rfc822Name)};
    case GEN_URI: return auth::CertificateName{Kind::Uri, text(name.d.uniformResourceIdentifier)};
    case GEN_IPADD: {
      const int len = ASN1_STRING_length(name.d.iPAddress);
      if (len != 4 && len != 16) return std::nullopt;
      char buf[INET6_ADDRSTRLEN] = {};
      if (!inet_ntop(len == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(name.d.iPAddress), buf, sizeof buf)) {
        return std::nullopt;
      }
      return auth::CertificateName{Kind::Ip, buf};
    }
    default: return std::nullopt;
  }
}

}  // namespace

auth::CertificateNames TlsTransport::peer_names() const {
  auth::CertificateNames names;
  X509* cert = SSL_get0_peer_certificate(ssl_);
  if (!cert) return names;
  names.subject = peer_identity();
  auto* alt = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; alt && i < sk_GENERAL_NAME_num(alt); ++i) {
    std::optional<auth::CertificateName> name = alt_name(*sk_GENERAL_NAME_value(alt, i));
    // A name with a NUL inside could pose as a shorter one: it names no user.
    if (name && !name->value.empty() && name->value.find('\0') == std::string::npos) {
      names.alt_names.push_back(std::move(*name));
    }
  }
  GENERAL_NAMES_free(alt);
  return names;
}

bool TlsTransport::session_reused() const { return SSL_session_reused(ssl_) == 1; }

std::string TlsTransport::cipher() const {
  const SSL_CIPHER* suite = SSL_get_current_cipher(ssl_);
  return suite ? SSL_CIPHER_get_name(suite) : "";
}

SSL_SESSION* TlsTransport::take_session() const { return SSL_get1_session(ssl_); }

}  // namespace tw::session
