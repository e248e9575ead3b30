// The names a TLS client certificate carries, each with its kind. A name
// is matched only against users-file entries of the same kind: the text of a
// common name can be anything the CA let through ("DNS:feed.example.com"
// included), so a subject or CN must never be able to pose as a
// subjectAltName, nor the reverse. Header-only: the transports (which the
// client library uses without tw_auth) fill it in.
#pragma once
#include <string>
#include <vector>

namespace tw::auth {

struct CertificateName {
  // Subject: an RFC 2253 subject or a bare CN (users-file entries without a
  // known "KIND:" prefix). The others are subjectAltName entries.
  enum class Kind { Subject, Dns, Email, Uri, Ip };
  Kind kind = Kind::Subject;
  std::string value;  // without any "KIND:" prefix

  bool operator==(const CertificateName&) const = default;
};

struct CertificateNames {
  std::string subject;                    // RFC 2253 ("CN=alice,O=Example"); "" without a certificate
  std::vector<CertificateName> alt_names;  // the subjectAltNames that can name a user, in the certificate's order

  bool empty() const { return subject.empty() && alt_names.empty(); }
  bool operator==(const CertificateNames&) const = default;
};

}  // namespace tw::auth
