#include "testlib/test_pki.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>

namespace tw::testing {
namespace {

constexpr long kDay = 24 * 3600;

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "test_pki: %s failed\n", what);
  std::abort();
}

struct Issued {
  X509* cert = nullptr;
  EVP_PKEY* key = nullptr;
  ~Issued() {
    X509_free(cert);
    EVP_PKEY_free(key);
  }
};

struct Validity {
  long from_s = -kDay;  // relative to now
  long until_s = 365 * kDay;
};

void add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer ? issuer : cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!ext || X509_add_ext(cert, ext, -1) != 1) die("adding an extension");
  X509_EXTENSION_free(ext);
}

// A P-256 key and a certificate signed by `issuer` (self-signed when null).
void issue(Issued& out, const Issued* issuer, const char* common_name, bool is_ca, const char* san,
           Validity validity = {}) {
  static long serial = 1;
  out.key = EVP_EC_gen("P-256");
  out.cert = X509_new();
  if (!out.key || !out.cert) die("key generation");
  X509_set_version(out.cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(out.cert), serial++);
  X509_gmtime_adj(X509_getm_notBefore(out.cert), validity.from_s);
  X509_gmtime_adj(X509_getm_notAfter(out.cert), validity.until_s);
  X509_set_pubkey(out.cert, out.key);
  X509_NAME* name = X509_get_subject_name(out.cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name), -1, -1, 0);
  X509* issuer_cert = issuer ? issuer->cert : nullptr;
  X509_set_issuer_name(out.cert, issuer_cert ? X509_get_subject_name(issuer_cert) : name);
  add_extension(out.cert, issuer_cert, NID_basic_constraints, is_ca ? "critical,CA:TRUE" : "critical,CA:FALSE");
  add_extension(out.cert, issuer_cert, NID_key_usage,
                is_ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature,keyEncipherment");
  add_extension(out.cert, issuer_cert, NID_subject_key_identifier, "hash");
  if (issuer_cert) add_extension(out.cert, issuer_cert, NID_authority_key_identifier, "keyid:always");
  if (san) add_extension(out.cert, issuer_cert, NID_subject_alt_name, san);
  if (X509_sign(out.cert, issuer ? issuer->key : out.key, EVP_sha256()) == 0) die("signing");
}

void write_pem(const Issued& issued, const std::string& cert_path, const std::string& key_path) {
  FILE* cert = std::fopen(cert_path.c_str(), "w");
  if (!cert || PEM_write_X509(cert, issued.cert) != 1) die("writing a certificate");
  std::fclose(cert);
  if (key_path.empty()) return;
  FILE* key = std::fopen(key_path.c_str(), "w");
  if (!key || PEM_write_PrivateKey(key, issued.key, nullptr, nullptr, 0, nullptr, nullptr) != 1) die("writing a key");
  std::fclose(key);
}

void read_pem(Issued& out, const std::string& cert_path, const std::string& key_path) {
  FILE* cert = std::fopen(cert_path.c_str(), "r");
  FILE* key = std::fopen(key_path.c_str(), "r");
  if (!cert || !key) die("reading the CA");
  out.cert = PEM_read_X509(cert, nullptr, nullptr, nullptr);
  out.key = PEM_read_PrivateKey(key, nullptr, nullptr, nullptr);
  std::fclose(cert);
  std::fclose(key);
  if (!out.cert || !out.key) die("parsing the CA");
}

constexpr const char* kServerSan = "IP:127.0.0.1,DNS:localhost";

}  // namespace

TestPki::TestPki() {
  Issued root, server, client, named_client, expired, other_root, other_client;
  issue(root, nullptr, "tickwire-test-ca", true, nullptr, {-kDay, 3650 * kDay});
  issue(server, &root, "tickwire-test-server", false, kServerSan);
  issue(client, &root, "tickwire-test-client", false, nullptr);
  issue(named_client, &root, "tickwire-test-named-client", false,
        "DNS:feed.example.com,email:feed@example.com,URI:spiffe://example.com/feed,IP:10.1.2.3");
  issue(expired, &root, "tickwire-test-expired", false, kServerSan, {-10 * kDay, -kDay});
  issue(other_root, nullptr, "unrelated-test-ca", true, nullptr);
  issue(other_client, &other_root, "unrelated-test-client", false, nullptr);
  write_pem(root, ca(), dir_.file("ca.key"));
  write_pem(server, server_cert(), server_key());
  write_pem(client, client_cert(), client_key());
  write_pem(named_client, named_client_cert(), named_client_key());
  write_pem(expired, expired_cert(), expired_key());
  write_pem(other_root, other_ca(), "");
  write_pem(other_client, other_client_cert(), other_client_key());
}

void TestPki::issue_server_cert(const std::string& cert_path, const std::string& key_path,
                                const std::string& common_name) const {
  Issued authority, server;
  read_pem(authority, ca(), dir_.file("ca.key"));
  issue(server, &authority, common_name.c_str(), false, kServerSan);
  write_pem(server, cert_path, key_path);
}

void TestPki::issue_client_cert(const std::string& cert_path, const std::string& key_path,
                                const std::string& common_name, const std::string& san) const {
  Issued authority, client;
  read_pem(authority, ca(), dir_.file("ca.key"));
  issue(client, &authority, common_name.c_str(), false, san.empty() ? nullptr : san.c_str());
  write_pem(client, cert_path, key_path);
}

}  // namespace tw::testing
