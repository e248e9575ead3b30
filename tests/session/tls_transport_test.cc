// TlsTransport over a socketpair: handshake, bytes both ways, reads and
// writes cut at every point, and the refusals an operator must be able to read.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "io/out_queue.h"
#include <openssl/ssl.h>

#include "session/tls_pair.h"
#include "testlib/test_pki.h"

namespace tw::session {
namespace {

class TlsTransportTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { pki_ = new tw::testing::TestPki(); }
  static void TearDownTestSuite() { delete pki_; }

  static std::unique_ptr<TlsContext> server_context(std::string client_ca = "") {
    return must(TlsContext::server({pki_->server_cert(), pki_->server_key(), std::move(client_ca)}));
  }
  static std::unique_ptr<TlsContext> client_context(std::string ca, std::string cert = "", std::string key = "") {
    return must(TlsContext::client({std::move(ca), std::move(cert), std::move(key)}));
  }

  static tw::testing::TestPki* pki_;
};
tw::testing::TestPki* TlsTransportTest::pki_ = nullptr;

// A length-prefixed message like the native protocol's frames.
std::string framed_message(size_t payload_bytes) {
  std::string message(4 + payload_bytes, '\0');
  for (int i = 0; i < 4; ++i) message[i] = static_cast<char>((payload_bytes >> (8 * (3 - i))) & 0xFF);
  for (size_t i = 0; i < payload_bytes; ++i) message[4 + i] = static_cast<char>('a' + i % 26);
  return message;
}

TEST_F(TlsTransportTest, HandshakeThenBytesBothWays) {
  auto server = server_context();
  auto client = client_context(pki_->ca());
  TlsPair pair(*server, *client);
  ASSERT_TRUE(pair.handshake()) << pair.server->error_text() << " / " << pair.client->error_text();
  EXPECT_EQ(pair.client->kind(), "tls");
  EXPECT_EQ(pair.client->peer_identity(), "CN=tickwire-test-server");
  EXPECT_EQ(pair.server->peer_identity(), "") << "no client certificate was asked for";

  EXPECT_EQ(TlsPair::send(*pair.client, "ping"), 4);
  EXPECT_EQ(TlsPair::drain(*pair.server), "ping");
  EXPECT_EQ(TlsPair::send(*pair.server, "pong!"), 5);
  EXPECT_EQ(TlsPair::drain(*pair.client), "pong!");
}

TEST_F(TlsTransportTest, MutualTlsNamesTheClient) {
  auto server = server_context(pki_->ca());
  auto client = client_context(pki_->ca(), pki_->client_cert(), pki_->client_key());
  TlsPair pair(*server, *client);
  ASSERT_TRUE(pair.handshake()) << pair.server->error_text() << " / " << pair.client->error_text();
  EXPECT_EQ(TlsPair::send(*pair.client, "x"), 1);
  EXPECT_EQ(TlsPair::drain(*pair.server), "x");
  EXPECT_EQ(pair.server->peer_identity(), "CN=tickwire-test-client");
  EXPECT_EQ(pair.server->peer_names().subject, "CN=tickwire-test-client");
  EXPECT_TRUE(pair.server->peer_names().alt_names.empty()) << "no SAN";
}

// "KIND:value", for readable comparisons.
std::vector<std::string> alt_names(const auth::CertificateNames& names) {
  static constexpr const char* kKinds[] = {"subject", "DNS", "email", "URI", "IP"};
  std::vector<std::string> out;
  for (const auth::CertificateName& n : names.alt_names) out.push_back(kKinds[static_cast<int>(n.kind)] + (":" + n.value));
  return out;
}

TEST_F(TlsTransportTest, PeerNamesAreTheSubjectAndEverySubjectAltNameByKind) {
  auto server = server_context(pki_->ca());
  auto client = client_context(pki_->ca(), pki_->named_client_cert(), pki_->named_client_key());
  TlsPair pair(*server, *client);
  ASSERT_TRUE(pair.handshake()) << pair.server->error_text() << " / " << pair.client->error_text();
  EXPECT_EQ(pair.server->peer_names().subject, "CN=tickwire-test-named-client");
  const std::vector<std::string> expected{"DNS:feed.example.com", "email:feed@example.com",
                                          "URI:spiffe://example.com/feed", "IP:10.1.2.3"};
  EXPECT_EQ(alt_names(pair.server->peer_names()), expected);
  EXPECT_EQ(pair.client->peer_names().subject, "CN=tickwire-test-server");
  EXPECT_EQ(alt_names(pair.client->peer_names()), (std::vector<std::string>{"IP:127.0.0.1", "DNS:localhost"}));
}

// The server reads a message delivered as two TLS records cut at every byte
// offset, into a small buffer so some reads leave decrypted bytes behind
// (pending_input) for the session to read without a readiness event.
TEST_F(TlsTransportTest, MessageCutAtEveryByteArrivesWhole) {
  auto server = server_context();
  auto client = client_context(pki_->ca());
  TlsPair pair(*server, *client);
  ASSERT_TRUE(pair.handshake());
  const std::string message = framed_message(300);
  bool saw_pending_input = false;
  for (size_t cut = 1; cut < message.size(); ++cut) {
    ASSERT_EQ(TlsPair::send(*pair.client, message.substr(0, cut)), static_cast<ssize_t>(cut));
    std::string got = TlsPair::drain(*pair.server, 7);
    ASSERT_EQ(TlsPair::send(*pair.client, message.substr(cut)), static_cast<ssize_t>(message.size() - cut));
    std::vector<uint8_t> small(7);
    for (;;) {
      ReadResult r = pair.server->read(small);
      if (r.status != ReadStatus::Data) break;
      got.append(reinterpret_cast<const char*>(small.data()), r.bytes);
      saw_pending_input |= pair.server->pending_input() > 0;
    }
    ASSERT_EQ(got, message) << "cut at " << cut;
  }
  EXPECT_TRUE(saw_pending_input);
}

// A socket that takes a few KiB at a time: writev takes part of what it is
// offered, keeps the rest staged, and the next writev retries the staging
// first. Driven by the session's real output queue, every byte arrives once
// and in order.
TEST_F(TlsTransportTest, PartialWritesThroughATinySocketBuffer) {
  auto server = server_context();
  auto client = client_context(pki_->ca());
  TlsPair pair(*server, *client);
  ASSERT_TRUE(pair.handshake());
  int small = 4096;
  ASSERT_EQ(setsockopt(pair.server->fd(), SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);

  io::OutQueue queue;
  std::string sent;
  for (int i = 0; i < 400; ++i) {
    std::string frame = framed_message(100 + (i * 37) % 3000);
    sent += frame;
    queue.append_copy({reinterpret_cast<const uint8_t*>(frame.data()), frame.size()});
  }
  std::string received;
  bool saw_staged = false;
  int partial_flushes = 0;
  for (int round = 0; round < 100'000 && !queue.empty(); ++round) {
    io::FlushResult result = queue.flush(*pair.server);
    ASSERT_NE(result, io::FlushResult::Error) << pair.server->error_text();
    if (result == io::FlushResult::Pending) ++partial_flushes;
    saw_staged |= pair.server->staged_bytes() > 0;
    received += TlsPair::drain(*pair.client, 1000);
  }
  received += TlsPair::drain(*pair.client);
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(pair.server->staged_bytes(), 0u);
  EXPECT_GT(partial_flushes, 0);
  EXPECT_TRUE(saw_staged);
  ASSERT_EQ(received.size(), sent.size());
  EXPECT_TRUE(received == sent);
}

TEST_F(TlsTransportTest, ClientRefusesAServerFromAnotherCa) {
  auto server = server_context();
  auto client = client_context(pki_->other_ca());
  TlsPair pair(*server, *client);
  EXPECT_FALSE(pair.handshake());
  EXPECT_EQ(pair.client->error_text(), "certificate verify failed: unable to get local issuer certificate");
}

TEST_F(TlsTransportTest, ClientRefusesAnExpiredServerCertificate) {
  auto server = must(TlsContext::server({pki_->expired_cert(), pki_->expired_key(), ""}));
  auto client = client_context(pki_->ca());
  TlsPair pair(*server, *client);
  EXPECT_FALSE(pair.handshake());
  EXPECT_EQ(pair.client->error_text(), "certificate verify failed: certificate has expired");
}

TEST_F(TlsTransportTest, ClientRefusesAServerNamedOtherwise) {
  auto server = server_context();
  auto client = client_context(pki_->ca());
  TlsPair pair(*server, *client, "broker.example.com");
  EXPECT_FALSE(pair.handshake());
  EXPECT_EQ(pair.client->error_text(), "certificate verify failed: hostname mismatch");
}

TEST_F(TlsTransportTest, MutualTlsRefusesAClientWithoutCertificate) {
  auto server = server_context(pki_->ca());
  auto client = client_context(pki_->ca());
  TlsPair pair(*server, *client);
  EXPECT_FALSE(pair.handshake());
  EXPECT_EQ(pair.server->error_text(), "peer did not return a certificate");
}

TEST_F(TlsTransportTest, MutualTlsRefusesAClientOfAnotherCa) {
  auto server = server_context(pki_->ca());
  auto client = client_context(pki_->ca(), pki_->other_client_cert(), pki_->other_client_key());
  TlsPair pair(*server, *client);
  EXPECT_FALSE(pair.handshake());
  EXPECT_EQ(pair.server->error_text(), "certificate verify failed: unable to get local issuer certificate");
}

TEST_F(TlsTransportTest, PlaintextBytesFailTheServerHandshake) {
  auto server = server_context();
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  auto transport = std::move(*TlsTransport::accept(*server, fds[0]));
  const std::string hello = framed_message(40);  // what a native-protocol client sends first
  ASSERT_EQ(::write(fds[1], hello.data(), hello.size()), static_cast<ssize_t>(hello.size()));
  EXPECT_EQ(transport->handshake(), Handshake::Failed);
  EXPECT_NE(transport->error_text().find("(a plaintext client?)"), std::string::npos) << transport->error_text();
  ::close(fds[1]);
}

TEST_F(TlsTransportTest, PeerGoneBeforeTheHandshakeIsAClearFailure) {
  auto server = server_context();
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  auto transport = std::move(*TlsTransport::accept(*server, fds[0]));
  EXPECT_EQ(transport->handshake(), Handshake::WantRead);
  ::close(fds[1]);
  EXPECT_EQ(transport->handshake(), Handshake::Failed);
  EXPECT_EQ(transport->error_text(), "the peer closed the connection");
}

// What a peer of another implementation offers: a raw OpenSSL client with
// only the given TLS 1.3 suites, or capped at TLS 1.2, on the other end of a
// socketpair with the broker's server transport.
struct RawClient {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL* ssl = nullptr;
  std::unique_ptr<TlsTransport> server;

  RawClient(const TlsContext& server_context, const char* tls13_suites, int max_version) {
    SSL_CTX_set_ciphersuites(ctx, tls13_suites);
    SSL_CTX_set_max_proto_version(ctx, max_version);
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
    server = std::move(*TlsTransport::accept(server_context, fds[0]));
    ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fds[1]);
    SSL_set_connect_state(ssl);
  }
  ~RawClient() {
    if (ssl) ::close(SSL_get_fd(ssl));
    SSL_free(ssl);
    SSL_CTX_free(ctx);
  }
  bool handshake() {
    for (int step = 0; step < 50; ++step) {
      const bool client_done = SSL_do_handshake(ssl) == 1;
      const Handshake s = server->handshake();
      if (s == Handshake::Failed) return false;
      if (client_done && s == Handshake::Done) return true;
    }
    return false;
  }
};

// The broker prefers AES-128-GCM (tls_context.cc says why) and still serves a
// client that offers nothing else than AES-256-GCM, or only TLS 1.2.
TEST_F(TlsTransportTest, AesWith128BitKeysFirstOthersStillServed) {
  auto server = server_context();
  auto client = client_context(pki_->ca());
  TlsPair ours(*server, *client);
  ASSERT_TRUE(ours.handshake());
  EXPECT_EQ(ours.server->cipher(), "TLS_AES_128_GCM_SHA256");

  RawClient aes256_only(*server, "TLS_AES_256_GCM_SHA384", TLS1_3_VERSION);
  ASSERT_TRUE(aes256_only.handshake()) << aes256_only.server->error_text();
  EXPECT_EQ(aes256_only.server->cipher(), "TLS_AES_256_GCM_SHA384");

  RawClient tls12(*server, "TLS_AES_256_GCM_SHA384", TLS1_2_VERSION);
  ASSERT_TRUE(tls12.handshake()) << tls12.server->error_text();
  EXPECT_NE(tls12.server->cipher().find("AES128-GCM"), std::string::npos) << tls12.server->cipher();
}

TEST_F(TlsTransportTest, SecondHandshakeResumesTheSession) {
  auto server = server_context(pki_->ca());
  auto client = client_context(pki_->ca(), pki_->client_cert(), pki_->client_key());
  SSL_SESSION* saved = nullptr;
  {
    TlsPair first(*server, *client);
    ASSERT_TRUE(first.handshake());
    EXPECT_FALSE(first.server->session_reused());
    // TLS 1.3 tickets follow the handshake: the client takes them in with its first read.
    ASSERT_EQ(TlsPair::send(*first.server, "ticket?"), 7);
    EXPECT_EQ(TlsPair::drain(*first.client), "ticket?");
    saved = first.client->take_session();
    ASSERT_NE(saved, nullptr);
    // OpenSSL forgets a session whose connection ends without close_notify.
    first.client->shutdown();
    first.server->shutdown();
  }
  TlsPair second(*server, *client, "127.0.0.1", saved);
  SSL_SESSION_free(saved);
  ASSERT_TRUE(second.handshake()) << second.server->error_text() << " / " << second.client->error_text();
  EXPECT_TRUE(second.client->session_reused());
  EXPECT_TRUE(second.server->session_reused());
  EXPECT_EQ(second.server->peer_identity(), "CN=tickwire-test-client") << "resumed sessions keep the identity";
}

// Like read(2), one read returns everything that has arrived, across TLS
// records: a publisher's batches sent as many records are one turn's work
// for the broker, not one record per turn. An end after data waits for the next read.
TEST_F(TlsTransportTest, OneReadTakesEveryRecordThatArrived) {
  auto server = server_context();
  auto client = client_context(pki_->ca());
  TlsPair pair(*server, *client);
  ASSERT_TRUE(pair.handshake());
  std::string sent;
  for (int record = 0; record < 20; ++record) {
    const std::string part = framed_message(100 + static_cast<size_t>(record));
    ASSERT_EQ(TlsPair::send(*pair.client, part), static_cast<ssize_t>(part.size()));  // one record each
    sent += part;
  }
  pair.client->shutdown();
  std::vector<uint8_t> buf(64 * 1024);
  ReadResult first = pair.server->read(buf);
  ASSERT_EQ(first.status, ReadStatus::Data);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(buf.data()), first.bytes), sent);
  EXPECT_EQ(pair.server->read(buf).status, ReadStatus::Closed);
}

TEST_F(TlsTransportTest, ShutdownSendsCloseNotify) {
  auto server = server_context();
  auto client = client_context(pki_->ca());
  TlsPair pair(*server, *client);
  ASSERT_TRUE(pair.handshake());
  pair.server->shutdown();
  std::vector<uint8_t> buf(64);
  EXPECT_EQ(pair.client->read(buf).status, ReadStatus::Closed);
}

}  // namespace
}  // namespace tw::session
