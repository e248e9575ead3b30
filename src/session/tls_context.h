// TlsContext: one OpenSSL 3 SSL_CTX built from PEM files, for a listener
// (server) or for the client library (client), with the policy of
// docs/security.md: TLS 1.2 minimum, renegotiation off, session resumption on.
//
// Thread safety: new_ssl() and reload() may run on any threads at once. A
// reload builds a new SSL_CTX from the same files and swaps it in under a
// mutex; SSL objects made before keep the SSL_CTX they were made from (it is
// reference counted), so connections already open are not touched.
#pragma once
#include <memory>
#include <mutex>
#include <string>

#include "tickwire/base/result.h"

using SSL = struct ssl_st;
using SSL_CTX = struct ssl_ctx_st;

namespace tw::session {

struct TlsServerFiles {
  std::string cert;       // PEM: the certificate, then its chain
  std::string key;        // PEM private key
  std::string client_ca;  // PEM CA bundle; when set, clients must present a certificate it signed
};

struct TlsClientFiles {
  std::string ca;    // PEM CA bundle the broker's certificate must chain to; "" = system default paths
  std::string cert;  // optional client certificate (mutual TLS), with key
  std::string key;
};

class TlsContext {
 public:
  static Result<std::unique_ptr<TlsContext>> server(TlsServerFiles files);
  static Result<std::unique_ptr<TlsContext>> client(TlsClientFiles files);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // A new SSL object of the current SSL_CTX; nullptr only when out of memory.
  SSL* new_ssl() const;
  // Re-reads the files into a new SSL_CTX for connections made from now on.
  // On failure the current one stays in use and the error says why.
  Status reload();
  // reload(), logged for the listener `name`: INFO when done, WARN (keeping
  // the current certificate) when not. What SIGHUP does to every TLS listener.
  void reload_logged(const std::string& name);
  bool is_server() const { return server_; }
  bool verifies_clients() const { return !server_files_.client_ca.empty(); }
  const std::string& cert_file() const { return server_ ? server_files_.cert : client_files_.cert; }

 private:
  TlsContext(bool server, TlsServerFiles server_files, TlsClientFiles client_files, SSL_CTX* ctx);
  Result<SSL_CTX*> build() const;

  const bool server_;
  const TlsServerFiles server_files_;
  const TlsClientFiles client_files_;
  mutable std::mutex mutex_;  // guards ctx_: taken per connection and per reload, never per message
  SSL_CTX* ctx_;
};

// The reason OpenSSL's error queue holds, in words, and clears the queue:
// "certificate verify failed: certificate has expired". `fallback` when empty.
std::string take_openssl_error(const std::string& fallback);

}  // namespace tw::session
