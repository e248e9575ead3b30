// TlsContext: what an operator reads when the files are wrong.
#include <gtest/gtest.h>

#include "session/tls_context.h"
#include "testlib/test_pki.h"

namespace tw::session {
namespace {

std::string error_of(Result<std::unique_ptr<TlsContext>> made) { return made.ok() ? "" : made.error().message; }

TEST(TlsContext, ServerNeedsCertAndKey) {
  EXPECT_EQ(error_of(TlsContext::server({"cert.pem", "", ""})), "a TLS listener needs both cert and key");
}

TEST(TlsContext, MissingCertificateFileIsNamed) {
  tw::testing::TestPki pki;
  std::string error = error_of(TlsContext::server({pki.dir().file("absent.pem"), pki.server_key(), ""}));
  EXPECT_EQ(error, "cannot load certificate " + pki.dir().file("absent.pem") + ": No such file or directory");
}

TEST(TlsContext, KeyOfAnotherCertificateIsRefused) {
  tw::testing::TestPki pki;
  std::string error = error_of(TlsContext::server({pki.server_cert(), pki.client_key(), ""}));
  EXPECT_EQ(error.rfind("private key " + pki.client_key() + " does not match certificate", 0), 0u) << error;
}

TEST(TlsContext, UnreadableClientCaIsNamed) {
  tw::testing::TestPki pki;
  std::string error = error_of(TlsContext::server({pki.server_cert(), pki.server_key(), pki.dir().file("none.pem")}));
  EXPECT_EQ(error.rfind("cannot load CA file " + pki.dir().file("none.pem"), 0), 0u) << error;
}

TEST(TlsContext, ClientCertificateNeedsItsKey) {
  tw::testing::TestPki pki;
  EXPECT_EQ(error_of(TlsContext::client({pki.ca(), pki.client_cert(), ""})),
            "a client certificate needs both --cert and --key");
}

TEST(TlsContext, ValidFilesMakeBothKinds) {
  tw::testing::TestPki pki;
  auto server = TlsContext::server({pki.server_cert(), pki.server_key(), pki.ca()});
  ASSERT_TRUE(server.ok()) << server.error().message;
  EXPECT_TRUE((*server)->is_server());
  EXPECT_TRUE((*server)->verifies_clients());
  auto client = TlsContext::client({pki.ca(), pki.client_cert(), pki.client_key()});
  ASSERT_TRUE(client.ok()) << client.error().message;
  EXPECT_FALSE((*client)->is_server());
}

}  // namespace
}  // namespace tw::session
