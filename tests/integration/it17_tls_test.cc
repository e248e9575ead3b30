// TLS listeners end to end: the client library, `openssl s_client` as an
// outside client, the refusals an operator must be able to read in the log,
// handshake timeouts, certificate reload on SIGHUP, and half-open handshakes
// that must not hold up an established subscriber.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <functional>
#include <thread>

#include "tickwire/client/client.h"
#include "integration/it_support.h"
#include "io/socket.h"
#include "session/tls_transport.h"
#include "testlib/fields.h"
#include "testlib/test_pki.h"

namespace tw::it {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kSafetyMs = testing::kDefaultTimeoutMs;  // a safety net, never a performance bound

struct ListenerTls {
  bool mutual = false;               // client_ca = the test CA
  bool expired = false;              // serve the expired certificate
  uint32_t handshake_timeout_ms = 2'000;
  std::string log_level = "warn";
  std::string users_toml;            // an auth_file with this text, if any
};

// A broker whose one listener is TLS, with certificates made for this test.
// The live certificate files are copies, so a test can replace them and reload.
struct TlsBroker {
  testing::TestPki pki;
  std::string cert = pki.dir().file("live.pem");
  std::string key = pki.dir().file("live.key");
  std::unique_ptr<BrokerProcess> broker;

  explicit TlsBroker(ListenerTls tls = {}) {
    if (tls.expired) {
      std::filesystem::copy_file(pki.expired_cert(), cert);
      std::filesystem::copy_file(pki.expired_key(), key);
    } else {
      pki.issue_server_cert(cert, key, "first");
    }
    std::string toml = "handshake_timeout_ms = " + std::to_string(tls.handshake_timeout_ms) +
                       "\n[[listener]]\naddress = \"127.0.0.1:0\"\ncert = \"" + cert + "\"\nkey = \"" + key + "\"\n";
    if (tls.mutual) toml += "client_ca = \"" + pki.ca() + "\"\n";
    if (!tls.users_toml.empty()) {
      const std::string users = pki.dir().write("users.toml", tls.users_toml);
      toml = "auth_file = \"" + users + "\"\n" + toml;
    }
    broker = std::make_unique<BrokerProcess>(BrokerOptions{.config_toml = toml, .log_level = tls.log_level});
  }

  client::Options options(std::string name, bool with_client_cert = false) const {
    client::Options o;
    o.port = broker->port();
    o.client_name = std::move(name);
    o.tls = true;
    o.ca = pki.ca();
    if (with_client_cert) {
      o.cert = pki.client_cert();
      o.key = pki.client_key();
    }
    o.reconnect = false;
    o.close_linger_ms = 0;
    o.connect_timeout_ms = kSafetyMs;
    return o;
  }

  // Waits for `text` in the broker's log.
  bool logged(const std::string& text) const {
    auto deadline = Clock::now() + std::chrono::milliseconds(kSafetyMs);
    while (broker->err().find(text) == std::string::npos) {
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }
};

bool poll_until(client::Client& c, const std::function<bool()>& done) {
  auto deadline = Clock::now() + std::chrono::milliseconds(kSafetyMs);
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    c.poll(20);
  }
  return true;
}

// A subscriber through the client library that records every update's value.
struct Subscriber {
  client::Client client;
  std::vector<int64_t> values;

  Status start(const client::Options& options, const std::string& pattern) {
    if (auto connected = client.connect(options); !connected) return connected;
    auto sub = client.subscribe(pattern, [this](const client::Message& m) {
      fields::FieldImage image;
      if (image.replace(m.payload)) {  // a channel's first message arrives as its image
        if (auto value = testing::int_field(image, 1)) values.push_back(*value);
      }
    });
    if (!sub) return sub.error();
    // A round trip after SUBSCRIBE (the broker handles a connection's frames
    // in order) makes the subscription live before anything is published.
    auto fence = client.snapshot("TLS/FENCE", kSafetyMs);
    if (!fence) return fence.error();
    return Ok{};
  }
};

Status publish_values(client::Client& pub, const std::string& topic, int64_t from, int64_t to) {
  for (int64_t v = from; v <= to; ++v) {
    if (auto sent = pub.publish(topic, int_payload(v)); !sent) return sent;
  }
  return pub.flush();
}

// A subscriber to TLS/> and a publisher, both over TLS.
struct PubSub {
  Subscriber sub;
  client::Client pub;

  Status open(const TlsBroker& tls) {
    if (auto started = sub.start(tls.options("it17-sub"), "TLS/>"); !started) return started;
    return pub.connect(tls.options("it17-pub"));
  }
};

TEST(It17Tls, PublishSubscribeAndSnapshotOverTls) {
  TlsBroker tls;
  ASSERT_TRUE(tls.broker->ready()) << tls.broker->err();
  PubSub ps;
  auto opened = ps.open(tls);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  auto& [sub, pub] = ps;
  ASSERT_TRUE(publish_values(pub, "TLS/A", 1, 50).ok());
  ASSERT_TRUE(poll_until(sub.client, [&] { return sub.values.size() == 50; })) << sub.values.size();
  for (int64_t v = 1; v <= 50; ++v) EXPECT_EQ(sub.values[v - 1], v);

  auto snapshot = pub.snapshot("TLS/A", kSafetyMs);
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().message;
  EXPECT_TRUE(snapshot->found);
  EXPECT_EQ(snapshot->seq, 50u);
}

// Mutual TLS with a users file: the certificate is the login (HELLO without
// a password). The named client's certificate maps to `feed` by its DNS
// subjectAltName, the plain client's to `watcher` by its subject, and each
// connection gets that user's entitlements.
TEST(It17Tls, AClientCertificateLogsInAsTheUserItsSubjectOrAltNameNames) {
  TlsBroker tls({.mutual = true,
                 .log_level = "debug",
                 .users_toml = "[users.feed]\ncertificates = [\"DNS:feed.example.com\"]\n"
                               "[[users.feed.rule]]\nallow = [\"publish\", \"subscribe\"]\ntopics = [\"TLS/>\"]\n"
                               "[users.watcher]\ncertificates = [\"CN=tickwire-test-client\"]\n"
                               "[[users.watcher.rule]]\nallow = [\"subscribe\"]\ntopics = [\"TLS/>\"]\n"});
  ASSERT_TRUE(tls.broker->ready()) << tls.broker->err();
  client::Options as_feed = tls.options("it17-feed");
  as_feed.cert = tls.pki.named_client_cert();
  as_feed.key = tls.pki.named_client_key();

  Subscriber watcher;
  auto started = watcher.start(tls.options("it17-watcher", true), "TLS/>");
  ASSERT_TRUE(started.ok()) << started.error().message;
  client::Client feed;
  ASSERT_TRUE(feed.connect(as_feed).ok());
  ASSERT_TRUE(publish_values(feed, "TLS/CERT", 1, 5).ok());
  ASSERT_TRUE(poll_until(watcher.client, [&] { return watcher.values.size() == 5; })) << watcher.values.size();
  EXPECT_TRUE(tls.logged("'it17-feed', version " + std::to_string(wire::kProtocolVersion) + ", heartbeat"))
      << tls.broker->err();
  EXPECT_TRUE(tls.logged("user feed")) << tls.broker->err();
  EXPECT_TRUE(tls.logged("user watcher")) << tls.broker->err();

  // watcher's rules have no publish: its REGISTER is refused, and fatal, as for a password login.
  client::Client watcher_pub;
  ASSERT_TRUE(watcher_pub.connect(tls.options("it17-watcher-pub", true)).ok());
  (void)publish_values(watcher_pub, "TLS/CERT", 6, 6);
  EXPECT_TRUE(poll_until(watcher_pub, [&] { return !watcher_pub.connected(); }));
  EXPECT_TRUE(tls.logged("('it17-watcher-pub') disconnected: NOT_AUTHORIZED")) << tls.broker->err();
}

// A certificate from the trusted CA whose common name is the text of a
// users-file SAN entry ("DNS:feed.example.com") is not `feed`: typed entries
// match subjectAltNames of their kind only. Without anonymous access it is
// refused; a certificate with that name as a real DNS SAN still maps.
TEST(It17Tls, ACommonNameWrittenLikeASubjectAltNameMapsToNoOne) {
  TlsBroker tls({.mutual = true,
                 .users_toml = "[users.feed]\ncertificates = [\"DNS:feed.example.com\"]\n"
                               "[[users.feed.rule]]\nallow = [\"publish\", \"subscribe\"]\ntopics = [\"TLS/>\"]\n"});
  ASSERT_TRUE(tls.broker->ready()) << tls.broker->err();
  // Options for a client whose certificate has this CN and subjectAltName ("" = none).
  auto with_certificate = [&](const std::string& name, const std::string& cn, const std::string& san) {
    const std::string cert = tls.pki.dir().file(name + ".pem"), key = tls.pki.dir().file(name + ".key");
    tls.pki.issue_client_cert(cert, key, cn, san);
    client::Options options = tls.options("it17-" + name);
    options.cert = cert;
    options.key = key;
    return options;
  };
  client::Client impostor;
  auto connected = impostor.connect(with_certificate("posing", "DNS:feed.example.com", ""));
  ASSERT_FALSE(connected.ok()) << "the CN 'DNS:feed.example.com' logged in";
  EXPECT_NE(connected.error().message.find("AUTH_FAILED"), std::string::npos) << connected.error().message;

  client::Client feed;
  ASSERT_TRUE(feed.connect(with_certificate("real", "some-host", "DNS:feed.example.com")).ok());
  ASSERT_TRUE(publish_values(feed, "TLS/CERT", 1, 1).ok());
  auto fence = feed.snapshot("TLS/CERT", kSafetyMs);
  EXPECT_TRUE(fence.ok()) << "feed may subscribe TLS/>, so its snapshot is answered";
}

// An interactive provider over TLS, through the client library: it answers
// every REQUEST with an image whose field 1 is its number.
struct TlsProvider {
  client::Client client;
  int64_t number = 0;
  int requests = 0;

  Status start(const TlsBroker& tls, int64_t n) {
    number = n;
    if (auto connected = client.connect(tls.options("it17-provider-" + std::to_string(n))); !connected) {
      return connected;
    }
    auto provided = client.provide(
        "TLSVC", "",
        [this](const client::Stream& stream) {
          ++requests;
          (void)client.publish_stream(stream.id, testing::field_list({{1, number}}), true);
        },
        [](const client::Stream&) {});
    if (!provided) return provided.error();
    auto fence = client.snapshot("TLS/FENCE", kSafetyMs);  // frames are handled in order: PROVIDE is in
    return fence ? Status{Ok{}} : Status{fence.error()};
  }
};

TEST(It17Tls, ProviderFailoverOverTls) {
  TlsBroker tls;
  ASSERT_TRUE(tls.broker->ready()) << tls.broker->err();
  TlsProvider first, second;
  auto started = first.start(tls, 1);
  ASSERT_TRUE(started.ok()) << started.error().message;
  Subscriber sub;
  started = sub.start(tls.options("it17-failover-sub"), "TLSVC/X");
  ASSERT_TRUE(started.ok()) << started.error().message;
  auto poll_all = [&] {
    first.client.poll(0);
    second.client.poll(0);
  };
  ASSERT_TRUE(poll_until(sub.client, [&] { poll_all(); return !sub.values.empty(); }));
  EXPECT_EQ(sub.values.back(), 1);

  started = second.start(tls, 2);
  ASSERT_TRUE(started.ok()) << started.error().message;
  first.client.close();  // the channel's provider is gone: the broker asks the other one
  ASSERT_TRUE(poll_until(sub.client, [&] { poll_all(); return sub.values.back() == 2; })) << sub.values.size();
  EXPECT_EQ(first.requests, 1);
  EXPECT_EQ(second.requests, 1);
}

// A client that connects again offers its last session: the broker resumes
// it instead of a full key exchange.
TEST(It17Tls, AReconnectingClientResumesItsTlsSession) {
  TlsBroker tls;
  ASSERT_TRUE(tls.broker->ready()) << tls.broker->err();
  client::Client c;
  ASSERT_TRUE(c.connect(tls.options("it17-resume")).ok());
  EXPECT_FALSE(c.tls_resumed()) << "the first connection has nothing to resume";
  auto fence = c.snapshot("TLS/FENCE", kSafetyMs);  // a round trip: the session tickets have arrived
  ASSERT_TRUE(fence.ok()) << fence.error().message;
  c.close();
  ASSERT_TRUE(c.connect(tls.options("it17-resume")).ok());
  EXPECT_TRUE(c.tls_resumed());
  fence = c.snapshot("TLS/FENCE", kSafetyMs);
  EXPECT_TRUE(fence.ok()) << fence.error().message;
}

TEST(It17Tls, OpensslSClientIsWelcomed) {
  TlsBroker tls;
  ASSERT_TRUE(tls.broker->ready()) << tls.broker->err();
  uint8_t buf[256];
  wire::Hello hello;
  hello.client_name = "s_client";
  size_t n = wire::encode({buf, sizeof buf}, hello);
  std::string hello_file = tls.pki.dir().write("hello.bin", std::string(reinterpret_cast<char*>(buf), n));
  // -quiet also keeps s_client reading after its input ends, until the broker closes.
  testing::Process s_client("/bin/sh", {"-c", "exec openssl s_client -quiet -verify_return_error -CAfile " +
                                                  tls.pki.ca() + " -connect 127.0.0.1:" +
                                                  std::to_string(tls.broker->port()) + " < " + hello_file});
  ASSERT_TRUE(s_client.started());
  // WELCOME carries the server name: seeing it means the frame came back decrypted.
  EXPECT_TRUE(s_client.wait_for_out("tickwired", kSafetyMs)) << s_client.err();
  s_client.stop();
}

TEST(It17Tls, ClientRefusesABrokerCertificateFromAnotherCa) {
  TlsBroker tls;
  ASSERT_TRUE(tls.broker->ready()) << tls.broker->err();
  client::Client c;
  client::Options options = tls.options("it17-wrong-ca");
  options.ca = tls.pki.other_ca();
  auto connected = c.connect(options);
  ASSERT_FALSE(connected.ok());
  EXPECT_NE(connected.error().message.find("certificate verify failed: unable to get local issuer certificate"),
            std::string::npos)
      << connected.error().message;
}

TEST(It17Tls, ClientRefusesAnExpiredBrokerCertificate) {
  TlsBroker tls({.expired = true});
  ASSERT_TRUE(tls.broker->ready()) << tls.broker->err();
  client::Client c;
  auto connected = c.connect(tls.options("it17-expired"));
  ASSERT_FALSE(connected.ok());
  EXPECT_NE(connected.error().message.find("certificate verify failed: certificate has expired"), std::string::npos)
      << connected.error().message;
}

TEST(It17Tls, MutualTlsRefusesAClientWithoutCertificateAndSaysWhy) {
  TlsBroker tls({.mutual = true});
  ASSERT_TRUE(tls.broker->ready()) << tls.broker->err();
  client::Client without;
  // TLS 1.3 clients finish before the broker checks them: the refusal may
  // come as a failed handshake or as the connection closing at HELLO.
  EXPECT_FALSE(without.connect(tls.options("it17-anonymous")).ok());
  EXPECT_TRUE(tls.logged("closed: tls handshake failed: peer did not return a certificate")) << tls.broker->err();

  client::Client with;
  auto connected = with.connect(tls.options("it17-known", true));
  EXPECT_TRUE(connected.ok()) << connected.error().message;
}

TEST(It17Tls, PlaintextClientsOnTheTlsPortAreClosed) {
  TlsBroker tls({.handshake_timeout_ms = 200});
  ASSERT_TRUE(tls.broker->ready()) << tls.broker->err();
  RawClient speaks_native;  // its HELLO is not a TLS record: the handshake fails at once
  ASSERT_TRUE(speaks_native.connect(tls.broker->port()));
  ASSERT_TRUE(speaks_native.send_hello("plaintext"));
  EXPECT_TRUE(speaks_native.wait_closed());
  RawClient silent;  // says nothing: closed when handshake_timeout_ms passes
  ASSERT_TRUE(silent.connect(tls.broker->port()));
  EXPECT_TRUE(silent.wait_closed());
  EXPECT_TRUE(tls.logged("tls handshake not completed in time")) << tls.broker->err();
}

TEST(It17Tls, SighupReloadsTheCertificateWithoutDroppingSubscribers) {
  TlsBroker tls({.log_level = "info"});
  ASSERT_TRUE(tls.broker->ready()) << tls.broker->err();
  PubSub ps;
  auto opened = ps.open(tls);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  auto& [sub, pub] = ps;
  ASSERT_TRUE(publish_values(pub, "TLS/R", 1, 10).ok());
  ASSERT_TRUE(poll_until(sub.client, [&] { return sub.values.size() == 10; }));

  tls.pki.issue_server_cert(tls.cert, tls.key, "second");
  tls.broker->send_signal(SIGHUP);
  ASSERT_TRUE(tls.logged("reloaded the TLS certificate")) << tls.broker->err();

  ASSERT_TRUE(publish_values(pub, "TLS/R", 11, 20).ok());
  ASSERT_TRUE(poll_until(sub.client, [&] { return sub.values.size() == 20; })) << sub.values.size();
  EXPECT_EQ(sub.values.back(), 20);
  EXPECT_TRUE(sub.client.connected());

  // New connections get the new certificate (the old one's name would do as well, so check it).
  auto context = session::TlsContext::client({tls.pki.ca(), "", ""});
  ASSERT_TRUE(context.ok());
  auto fd = io::connect_tcp("127.0.0.1", tls.broker->port(), kSafetyMs);
  ASSERT_TRUE(fd.ok()) << fd.error().message;
  auto transport = session::TlsTransport::connect(**context, *fd, "127.0.0.1");
  ASSERT_TRUE(transport.ok());
  session::Handshake step = session::Handshake::WantWrite;
  auto deadline = Clock::now() + std::chrono::milliseconds(kSafetyMs);
  while (step != session::Handshake::Done && step != session::Handshake::Failed && Clock::now() < deadline) {
    step = (*transport)->handshake();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(step, session::Handshake::Done) << (*transport)->error_text();
  EXPECT_EQ((*transport)->peer_identity(), "CN=second");
}

// The first bytes of a ClientHello: a handshake record of 512 bytes, of
// which only the record and handshake headers and the version ever come.
constexpr uint8_t kClientHelloStart[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03};

// 1,000 connections that never finish a handshake (half of them silent,
// half stalled after their ClientHello) cost the broker a socket each and
// nothing else: an established subscriber still receives every update.
TEST(It17Tls, HalfOpenHandshakesDoNotHoldUpSubscribers) {
  testing::raise_fd_limit();
  TlsBroker tls({.handshake_timeout_ms = 60'000});
  ASSERT_TRUE(tls.broker->ready()) << tls.broker->err();
  PubSub ps;
  auto opened = ps.open(tls);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  auto& [sub, pub] = ps;

  std::vector<std::unique_ptr<RawClient>> silent;
  std::vector<std::unique_ptr<RawClient>> stalled;
  for (int i = 0; i < 500; ++i) {
    auto raw = std::make_unique<RawClient>();
    ASSERT_TRUE(raw->connect(tls.broker->port())) << "connection " << i;
    silent.push_back(std::move(raw));
    auto stalled_hello = std::make_unique<RawClient>();
    ASSERT_TRUE(stalled_hello->connect(tls.broker->port())) << "connection " << i;
    ASSERT_TRUE(stalled_hello->send_raw(kClientHelloStart));
    stalled.push_back(std::move(stalled_hello));
  }

  ASSERT_TRUE(publish_values(pub, "TLS/H", 1, 200).ok());
  ASSERT_TRUE(poll_until(sub.client, [&] { return sub.values.size() == 200; })) << sub.values.size();
  for (int64_t v = 1; v <= 200; ++v) ASSERT_EQ(sub.values[v - 1], v);
  EXPECT_TRUE(tls.broker->alive());
}

}  // namespace
}  // namespace tw::it
