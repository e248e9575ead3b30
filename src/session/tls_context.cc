#include "session/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstring>

#include "base/log.h"
#include <utility>

namespace tw::session {
namespace {

// Every connection of one broker presents this id context: OpenSSL refuses
// to resume a session with a verified client certificate without one.
constexpr unsigned char kSessionIdContext[] = "tickwire";

struct CtxDeleter {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
using CtxPtr = std::unique_ptr<SSL_CTX, CtxDeleter>;

// Both sides: TLS 1.2 or newer, no renegotiation (a client could make the
// broker redo the expensive half of a handshake at will), and writes that
// may complete one record at a time from a buffer that moves between tries.
// A peer that closes without close_notify reads as a plain end of stream:
// every frame is length-prefixed, so a truncated one is seen anyway.
// Read-ahead: OpenSSL reads what the socket has (up to a record's buffer) in
// one read(2) instead of a record header and then its body: without it, half
// the broker's CPU under a TLS publisher went to read(2) (perf, W1 at 200K
// msg/s). Bytes it has read ahead show in pending_input (SSL_has_pending).
// AES-128-GCM first (as Go's crypto/tls and most CDNs order them): on this
// x86-64 with AES-NI it encrypts 16 KiB records 15-40 % faster than
// AES-256-GCM (`openssl speed -evp`, docs/benchmarks.md), and the broker
// encrypts every message once per subscriber. AES-256 and ChaCha20 stay
// available for peers that ask only for them.
constexpr char kTls13Suites[] = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";
constexpr char kTls12Ciphers[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

void apply_policy(SSL_CTX* ctx) {
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_read_ahead(ctx, 1);
  SSL_CTX_set_ciphersuites(ctx, kTls13Suites);
  SSL_CTX_set_cipher_list(ctx, kTls12Ciphers);
}

Status load_identity(SSL_CTX* ctx, const std::string& cert, const std::string& key) {
  if (SSL_CTX_use_certificate_chain_file(ctx, cert.c_str()) != 1) {
    return Error{"cannot load certificate " + cert + ": " + take_openssl_error("unreadable")};
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) != 1) {
    const unsigned long first = ERR_peek_error();
    if (ERR_GET_LIB(first) == ERR_LIB_X509 && ERR_GET_REASON(first) == X509_R_KEY_VALUES_MISMATCH) {
      ERR_clear_error();
      return Error{"private key " + key + " does not match certificate " + cert};
    }
    return Error{"cannot load private key " + key + ": " + take_openssl_error("unreadable")};
  }
  return Ok{};
}

Status load_trust(SSL_CTX* ctx, const std::string& ca) {
  if (SSL_CTX_load_verify_locations(ctx, ca.c_str(), nullptr) != 1) {
    return Error{"cannot load CA file " + ca + ": " + take_openssl_error("unreadable")};
  }
  return Ok{};
}

Result<SSL_CTX*> build_server(const TlsServerFiles& files) {
  CtxPtr ctx(SSL_CTX_new(TLS_server_method()));
  if (!ctx) return Error{"cannot create a TLS context: " + take_openssl_error("out of memory")};
  apply_policy(ctx.get());
  if (auto loaded = load_identity(ctx.get(), files.cert, files.key); !loaded) return loaded.error();
  if (!files.client_ca.empty()) {
    if (auto trusted = load_trust(ctx.get(), files.client_ca); !trusted) return trusted.error();
    // The CA names go in the CertificateRequest so a client picks the right certificate.
    SSL_CTX_set_client_CA_list(ctx.get(), SSL_load_client_CA_file(files.client_ca.c_str()));
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  // Resumption both ways: a server-side cache (session ids) and tickets
  // (on by default), so a reconnecting client skips the key exchange.
  SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_SERVER);
  SSL_CTX_set_session_id_context(ctx.get(), kSessionIdContext, sizeof kSessionIdContext - 1);
  return ctx.release();
}

Result<SSL_CTX*> build_client(const TlsClientFiles& files) {
  CtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) return Error{"cannot create a TLS context: " + take_openssl_error("out of memory")};
  apply_policy(ctx.get());
  if (files.ca.empty()) {
    SSL_CTX_set_default_verify_paths(ctx.get());
  } else if (auto trusted = load_trust(ctx.get(), files.ca); !trusted) {
    return trusted.error();
  }
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  if (files.cert.empty() != files.key.empty()) return Error{"a client certificate needs both --cert and --key"};
  if (!files.cert.empty()) {
    if (auto loaded = load_identity(ctx.get(), files.cert, files.key); !loaded) return loaded.error();
  }
  SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_CLIENT);
  return ctx.release();
}

}  // namespace

std::string take_openssl_error(const std::string& fallback) {
  unsigned long first = ERR_get_error();
  ERR_clear_error();
  if (first == 0) return fallback;
  // A file that cannot be opened is a system error: its reason is the errno.
  if (ERR_SYSTEM_ERROR(first)) return std::strerror(ERR_GET_REASON(first));
  const char* reason = ERR_reason_error_string(first);
  return reason ? reason : fallback;
}

TlsContext::TlsContext(bool server, TlsServerFiles server_files, TlsClientFiles client_files, SSL_CTX* ctx)
    : server_(server), server_files_(std::move(server_files)), client_files_(std::move(client_files)), ctx_(ctx) {}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

Result<std::unique_ptr<TlsContext>> TlsContext::server(TlsServerFiles files) {
  if (files.cert.empty() || files.key.empty()) return Error{"a TLS listener needs both cert and key"};
  auto ctx = build_server(files);
  if (!ctx) return ctx.error();
  return std::unique_ptr<TlsContext>(new TlsContext(true, std::move(files), {}, *ctx));
}

Result<std::unique_ptr<TlsContext>> TlsContext::client(TlsClientFiles files) {
  auto ctx = build_client(files);
  if (!ctx) return ctx.error();
  return std::unique_ptr<TlsContext>(new TlsContext(false, {}, std::move(files), *ctx));
}

Result<SSL_CTX*> TlsContext::build() const { return server_ ? build_server(server_files_) : build_client(client_files_); }

SSL* TlsContext::new_ssl() const {
  std::lock_guard lock(mutex_);
  return SSL_new(ctx_);
}

Status TlsContext::reload() {
  auto fresh = build();
  if (!fresh) return fresh.error();
  SSL_CTX* old;
  {
    std::lock_guard lock(mutex_);
    old = std::exchange(ctx_, *fresh);
  }
  SSL_CTX_free(old);  // connections made from it hold their own reference
  return Ok{};
}

// A failed reload keeps the certificate in use: the listener stays reachable.
void TlsContext::reload_logged(const std::string& name) {
  if (auto reloaded = reload(); reloaded) {
    TW_INFO("%s: reloaded the TLS certificate", name.c_str());
  } else {
    TW_WARN("%s: TLS reload failed, keeping the current certificate: %s", name.c_str(),
            reloaded.error().message.c_str());
  }
}

}  // namespace tw::session
