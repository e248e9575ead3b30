// TlsContext::reload: new connections get the new certificate, connections
// already open keep working, and a failed reload changes nothing.
#include <gtest/gtest.h>

#include <fstream>

#include "session/tls_pair.h"
#include "testlib/test_pki.h"

namespace tw::session {
namespace {

struct ReloadSetup {
  tw::testing::TestPki pki;
  std::string cert = pki.dir().file("live.pem");
  std::string key = pki.dir().file("live.key");
  std::unique_ptr<TlsContext> server;
  std::unique_ptr<TlsContext> client = must(TlsContext::client({pki.ca(), "", ""}));

  ReloadSetup() {
    pki.issue_server_cert(cert, key, "first");
    server = must(TlsContext::server({cert, key, ""}));
  }
};

TEST(TlsReload, NewConnectionsGetTheNewCertificateOldOnesKeepWorking) {
  ReloadSetup setup;
  TlsPair before(*setup.server, *setup.client);
  ASSERT_TRUE(before.handshake());
  EXPECT_EQ(before.client->peer_identity(), "CN=first");

  setup.pki.issue_server_cert(setup.cert, setup.key, "second");
  auto reloaded = setup.server->reload();
  ASSERT_TRUE(reloaded.ok()) << reloaded.error().message;

  EXPECT_EQ(TlsPair::send(*before.server, "still here"), 10);
  EXPECT_EQ(TlsPair::drain(*before.client), "still here");
  EXPECT_EQ(TlsPair::send(*before.client, "me too"), 6);
  EXPECT_EQ(TlsPair::drain(*before.server), "me too");

  TlsPair after(*setup.server, *setup.client);
  ASSERT_TRUE(after.handshake());
  EXPECT_EQ(after.client->peer_identity(), "CN=second");
}

TEST(TlsReload, FailedReloadKeepsTheCurrentCertificate) {
  ReloadSetup setup;
  std::ofstream(setup.cert) << "not a certificate\n";
  auto reloaded = setup.server->reload();
  ASSERT_FALSE(reloaded.ok());
  EXPECT_EQ(reloaded.error().message.rfind("cannot load certificate " + setup.cert + ": ", 0), 0u)
      << reloaded.error().message;

  TlsPair after(*setup.server, *setup.client);
  ASSERT_TRUE(after.handshake()) << after.client->error_text();
  EXPECT_EQ(after.client->peer_identity(), "CN=first");
}

}  // namespace
}  // namespace tw::session
