// A throwaway PKI for TLS tests, made with the OpenSSL API when the test
// runs (nothing to expire in the repository): PEM files in a temp folder.
//
//   ca ── server (CN tickwire-test-server, SAN IP 127.0.0.1 and DNS localhost)
//      ├─ client (CN tickwire-test-client)
//      ├─ named client (CN tickwire-test-named-client; SAN DNS feed.example.com,
//      │  email feed@example.com, URI spiffe://example.com/feed, IP 10.1.2.3)
//      └─ expired server (validity ended yesterday)
//   other_ca ── other_client (an unrelated CA and a client it signed)
#pragma once
#include <string>

#include "testlib/process.h"

namespace tw::testing {

class TestPki {
 public:
  TestPki();  // writes every file; aborts the test binary if OpenSSL fails

  std::string ca() const { return dir_.file("ca.pem"); }
  std::string server_cert() const { return dir_.file("server.pem"); }
  std::string server_key() const { return dir_.file("server.key"); }
  std::string client_cert() const { return dir_.file("client.pem"); }
  std::string client_key() const { return dir_.file("client.key"); }
  std::string named_client_cert() const { return dir_.file("named_client.pem"); }
  std::string named_client_key() const { return dir_.file("named_client.key"); }
  std::string expired_cert() const { return dir_.file("expired.pem"); }
  std::string expired_key() const { return dir_.file("expired.key"); }
  std::string other_ca() const { return dir_.file("other_ca.pem"); }
  std::string other_client_cert() const { return dir_.file("other_client.pem"); }
  std::string other_client_key() const { return dir_.file("other_client.key"); }
  const TempDir& dir() const { return dir_; }

  // Issues a new server certificate (same SAN) named `common_name` from ca
  // and writes it and its key over the given paths: what an operator does
  // before a reload.
  void issue_server_cert(const std::string& cert_path, const std::string& key_path,
                         const std::string& common_name) const;
  // Issues a client certificate from ca with this common name and
  // subjectAltNames (OpenSSL's "DNS:a,email:b" form; "" = none).
  void issue_client_cert(const std::string& cert_path, const std::string& key_path, const std::string& common_name,
                         const std::string& san) const;

 private:
  TempDir dir_;
};

}  // namespace tw::testing
