#include "auth/authority.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <thread>

#include "auth/password.h"

namespace tw::auth {
namespace {

constexpr HashCost kCheap{1, 1024, 1};  // tests only

TEST(Password, HashVerifies) {
  auto h = hash_password("correct horse", kCheap);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->rfind("$argon2id$v=19$m=1024,t=1,p=1$", 0), 0u) << *h;
  EXPECT_TRUE(verify_password(*h, "correct horse"));
  EXPECT_FALSE(verify_password(*h, "correct horse "));
  EXPECT_FALSE(verify_password(*h, ""));
  EXPECT_FALSE(verify_password("$argon2id$garbage", "correct horse"));
  auto again = hash_password("correct horse", kCheap);
  ASSERT_TRUE(again.ok());
  EXPECT_NE(*again, *h);  // a fresh salt each time
}

TEST(CommonName, FromAnRfc2253Subject) {
  EXPECT_EQ(common_name("CN=alice,O=Example"), "alice");
  EXPECT_EQ(common_name("O=Example,CN=bob"), "bob");
  EXPECT_EQ(common_name("O=A\\,B,CN=carol"), "carol");
  EXPECT_EQ(common_name("O=Example"), "");
}

std::shared_ptr<Login> wait(std::shared_ptr<Login> login) {
  while (!login->done.load(std::memory_order_acquire)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return login;
}

class AuthorityTest : public ::testing::Test {
 protected:
  void write(const std::string& extra) {
    std::ofstream(path_) << "[users.alice]\npassword = \"" << *hash_password("pw", kCheap) << "\"\n" << extra;
  }
  std::string path_ = ::testing::TempDir() + "/authority_test_" +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                      std::to_string(::getpid()) + ".toml";
  ~AuthorityTest() override { std::remove(path_.c_str()); }
  // An Authority over alice's users file with these settings (not started); null if the file did not load.
  std::unique_ptr<Authority> authority_with(const Authority::Settings& settings) {
    write("");
    auto policy = Policy::load(path_);
    EXPECT_TRUE(policy.ok());
    return policy.ok() ? std::make_unique<Authority>(settings, *policy) : nullptr;
  }
};

TEST_F(AuthorityTest, LoginsAreCheckedOffTheCallersThread) {
  write("");
  auto policy = Policy::load(path_);
  ASSERT_TRUE(policy.ok());
  Authority authority({path_, false, 0}, *policy);
  authority.start();
  auto good = wait(authority.authenticate("alice", "pw", "10.0.0.1"));
  ASSERT_TRUE(good->grants);
  EXPECT_EQ(good->grants->user(), "alice");
  auto bad = wait(authority.authenticate("alice", "nope", "10.0.0.1"));
  EXPECT_FALSE(bad->grants);
  auto unknown = wait(authority.authenticate("nobody", "pw", "10.0.0.1"));
  EXPECT_FALSE(unknown->grants);
  EXPECT_STREQ(bad->error, unknown->error);  // the answer does not say which part was wrong
  EXPECT_EQ(authority.failures(), 2u);
  EXPECT_FALSE(authority.for_anonymous());
}

TEST_F(AuthorityTest, AReloadSwapsThePolicyAndABadFileKeepsIt) {
  write("");
  auto policy = Policy::load(path_);
  ASSERT_TRUE(policy.ok());
  Authority authority({path_, true, 0}, *policy);
  const uint64_t first = authority.generation();
  const auto alice = authority.policy()->find_user("alice")->grants;
  write("[[users.alice.rule]]\nallow = [\"subscribe\"]\ntopics = [\"EQ/>\"]\n");
  ASSERT_TRUE(authority.reload().ok());
  EXPECT_GT(authority.generation(), first);
  auto now = authority.refresh(*alice);
  ASSERT_TRUE(now);
  EXPECT_TRUE(now->receives("EQ/IBM", 0));
  EXPECT_FALSE(alice->receives("EQ/IBM", 0));  // old grants are immutable
  std::ofstream(path_) << "[users.alice\n";
  const uint64_t second = authority.generation();
  EXPECT_FALSE(authority.reload().ok());
  EXPECT_EQ(authority.generation(), second);
  EXPECT_TRUE(authority.refresh(*alice)->receives("EQ/IBM", 0));
  ASSERT_TRUE(authority.for_anonymous());  // allow_anonymous: an empty rule set
  EXPECT_FALSE(authority.for_anonymous()->receives("EQ/IBM", 0));
}

TEST(SourceAddress, IsTheHostOfAPeerAndIpv6CountsByItsSlash64) {
  EXPECT_EQ(address_of("127.0.0.1:53122"), "127.0.0.1");
  EXPECT_EQ(address_of("::1:53122"), "::1");  // as io::accept_nonblocking writes IPv6 peers
  EXPECT_EQ(address_of("[2001:db8::7]:443"), "2001:db8::7");
  EXPECT_EQ(source_key("127.0.0.2"), "127.0.0.2");
  EXPECT_EQ(source_key("::ffff:10.1.2.3"), "10.1.2.3");
  EXPECT_EQ(source_key("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64");
  EXPECT_EQ(source_key("2001:db8:1:2::9"), source_key("2001:db8:1:2:3:4:5:6"));
  EXPECT_NE(source_key("2001:db8:1:3::9"), source_key("2001:db8:1:2:3:4:5:6"));
}

// Settings for the pool tests: cheap hashes, answers at once.
Authority::Settings pool_settings(const std::string& path, uint32_t verifiers, size_t per_source) {
  Authority::Settings s;
  s.path = path;
  s.failure_delay_ms = 0;
  s.verifier_threads = verifiers;
  s.max_pending_per_source = per_source;
  return s;
}

// The order of answers, not their times: 20 logins queued from one address
// before the verifier starts, then one from another address. The verifier
// takes addresses in turn, so the second address's login is the second
// checked, not the 21st (one verifier thread: the order it takes logins up
// is the order of the answers).
TEST_F(AuthorityTest, OneAddresssBacklogDoesNotHoldUpAnotherAddresssLogin) {
  auto authority = authority_with(pool_settings(path_, 1, 100));
  ASSERT_TRUE(authority);
  std::vector<std::shared_ptr<Login>> backlog;
  for (int i = 0; i < 20; ++i) backlog.push_back(authority->authenticate("alice", i % 2 ? "pw" : "guess", "10.0.0.1"));
  auto other = authority->authenticate("alice", "pw", "10.0.0.2");
  authority->start();
  ASSERT_TRUE(wait(other)->grants);
  for (auto& l : backlog) wait(l);
  EXPECT_EQ(other->turn, 2u) << "10.0.0.1's first login, then 10.0.0.2's";
  for (size_t i = 0; i < backlog.size(); ++i) {
    EXPECT_EQ(backlog[i]->turn, i == 0 ? 1u : i + 2) << "10.0.0.1's own logins stay in their order";
  }
}

// Three addresses with backlogs and one with a single login, two verifiers:
// the single login is taken up within one round of the addresses ahead of it.
TEST_F(AuthorityTest, VerifiersTakeAddressesRoundRobin) {
  auto authority = authority_with(pool_settings(path_, 2, 100));
  ASSERT_TRUE(authority);
  std::vector<std::shared_ptr<Login>> all;
  for (int i = 0; i < 10; ++i) {
    for (const char* source : {"10.0.0.1", "10.0.0.2", "10.0.0.3"}) all.push_back(authority->authenticate("alice", "pw", source));
  }
  auto late = authority->authenticate("alice", "pw", "10.0.0.4");
  authority->start();
  ASSERT_TRUE(wait(late)->grants);
  for (auto& l : all) ASSERT_TRUE(wait(l)->grants);
  EXPECT_EQ(late->turn, 4u) << "one login from each of the three addresses ahead, then 10.0.0.4's";
}

// max_pending_per_source logins in progress from one address: the next from
// there is refused at once, busy, with a clear answer, and counted; another
// address is not affected, nor that address once its logins are answered.
TEST_F(AuthorityTest, PastItsBoundAnAddressIsRefusedAtOnceAndCounted) {
  auto authority = authority_with(pool_settings(path_, 1, 4));
  ASSERT_TRUE(authority);
  std::vector<std::shared_ptr<Login>> first;
  for (int i = 0; i < 4; ++i) first.push_back(authority->authenticate("alice", "pw", "10.0.0.1"));
  for (auto& l : first) EXPECT_FALSE(l->done.load()) << "queued: the verifier has not started";
  auto refused = authority->authenticate("alice", "pw", "10.0.0.1");
  ASSERT_TRUE(refused->done.load());
  EXPECT_TRUE(refused->busy);
  EXPECT_FALSE(refused->grants);
  EXPECT_STREQ(refused->error, "too many login attempts from this address, try again later");
  EXPECT_EQ(authority->source_refusals(), 1u);
  // IPv6: one /64 is one source.
  std::vector<std::shared_ptr<Login>> v6;
  for (int i = 1; i <= 4; ++i) v6.push_back(authority->authenticate("alice", "pw", "2001:db8::" + std::to_string(i)));
  EXPECT_TRUE(authority->authenticate("alice", "pw", "2001:db8::99")->busy);
  EXPECT_EQ(authority->source_refusals(), 2u);
  auto other = authority->authenticate("alice", "pw", "10.0.0.2");
  EXPECT_FALSE(other->done.load());
  authority->start();
  for (auto& l : first) EXPECT_TRUE(wait(l)->grants);
  for (auto& l : v6) EXPECT_TRUE(wait(l)->grants);
  EXPECT_TRUE(wait(other)->grants);
  auto again = wait(authority->authenticate("alice", "pw", "10.0.0.1"));
  EXPECT_TRUE(again->grants) << "the bound counts logins in progress, not logins ever";
  EXPECT_EQ(authority->source_refusals(), 2u);
}

// A failed answer waits out failure_delay_ms without a verifier: with one
// verifier and a delay far longer than the test, another login is answered.
TEST_F(AuthorityTest, TheFailureDelayOccupiesNoVerifier) {
  Authority::Settings settings = pool_settings(path_, 1, 4);
  settings.failure_delay_ms = 60'000;
  auto authority = authority_with(settings);
  ASSERT_TRUE(authority);
  authority->start();
  auto guess = authority->authenticate("alice", "guess", "10.0.0.1");
  auto good = wait(authority->authenticate("alice", "pw", "10.0.0.1"));
  EXPECT_TRUE(good->grants);
  EXPECT_EQ(good->turn, 2u) << "the guess was checked first";
  EXPECT_FALSE(guess->done.load()) << "its answer is held, not its verifier";
}

CertificateNames certificate(std::string subject, std::vector<std::string> alt_names = {}) {
  CertificateNames names{std::move(subject), {}};
  for (const std::string& a : alt_names) names.alt_names.push_back(certificate_entry(a));
  return names;
}

TEST(CertificateEntry, TheKindIsAKnownPrefixInAnyCase) {
  using Kind = CertificateName::Kind;
  EXPECT_EQ(certificate_entry("DNS:feed.example.com"), (CertificateName{Kind::Dns, "feed.example.com"}));
  EXPECT_EQ(certificate_entry("dns:feed.example.com"), (CertificateName{Kind::Dns, "feed.example.com"}));
  EXPECT_EQ(certificate_entry("email:a@example.com"), (CertificateName{Kind::Email, "a@example.com"}));
  EXPECT_EQ(certificate_entry("URI:spiffe://x/y"), (CertificateName{Kind::Uri, "spiffe://x/y"}));
  EXPECT_EQ(certificate_entry("IP Address:10.1.2.3"), (CertificateName{Kind::Ip, "10.1.2.3"}));
  EXPECT_EQ(certificate_entry("CN=ops-1,O=Example"), (CertificateName{Kind::Subject, "CN=ops-1,O=Example"}));
  EXPECT_EQ(certificate_entry("host:8080"), (CertificateName{Kind::Subject, "host:8080"}));
}

// Names as TlsTransport::peer_names gives them: the subject, then the SANs by kind.
TEST_F(AuthorityTest, ACertificateMapsByItsSubjectItsCnOrASubjectAltName) {
  write("[users.feed]\ncertificates = [\"DNS:feed.example.com\"]\n"
        "[users.ops]\ncertificates = [\"CN=ops-1,O=Example\", \"URI:spiffe://example.com/ops\"]\n"
        "[users.bob]\ncertificates = [\"bob-laptop\"]\n");
  auto policy = Policy::load(path_);
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  Authority authority({path_, false, 0}, *policy);
  auto user = [&](const CertificateNames& names) {
    auto grants = authority.for_certificate(names);
    return grants ? grants->user() : std::string("(none)");
  };
  EXPECT_EQ(user(certificate("CN=ops-1,O=Example")), "ops");       // the full subject
  EXPECT_EQ(user(certificate("CN=bob-laptop,O=Example")), "bob");  // its CN
  EXPECT_EQ(user(certificate("CN=host-7", {"email:x@example.com", "DNS:feed.example.com"})), "feed");  // a SAN
  EXPECT_EQ(user(certificate("CN=host-7", {"DNS:FEED.example.com"})), "feed") << "DNS names ignore case";
  EXPECT_EQ(user(certificate("CN=ops-1,O=Example", {"DNS:feed.example.com"})), "ops") << "the subject comes first";
  EXPECT_EQ(user(certificate("CN=host-7", {"URI:spiffe://example.com/ops", "DNS:feed.example.com"})), "ops")
      << "then the SANs in the certificate's order";
  EXPECT_EQ(user(certificate("CN=feed.example.com")), "(none)") << "a CN is not a DNS SAN";
  EXPECT_EQ(user(certificate("CN=host-7", {"DNS:other.example.com"})), "(none)");
  EXPECT_EQ(user(certificate("CN=host-7", {"DNS:bob-laptop"})), "(none)") << "a SAN is not a CN";
  EXPECT_EQ(user(CertificateNames{}), "(none)") << "no certificate";
}

// A common name whose text is a typed entry ("DNS:feed.example.com") names
// no one: typed entries match subjectAltNames of their kind only.
TEST_F(AuthorityTest, ACommonNameWrittenLikeATypedEntryMapsToNoOne) {
  write("[users.feed]\ncertificates = [\"DNS:feed.example.com\", \"email:feed@example.com\", \"IP:10.1.2.3\"]\n"
        "[users.spiffe]\ncertificates = [\"uri:spiffe://example.com/feed\"]\n");
  auto policy = Policy::load(path_);
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  Authority authority({path_, false, 0}, *policy);
  for (const char* text : {"DNS:feed.example.com", "email:feed@example.com", "IP:10.1.2.3", "URI:spiffe://example.com/feed",
                           "uri:spiffe://example.com/feed"}) {
    EXPECT_FALSE(authority.for_certificate(certificate("CN=" + std::string(text)))) << "CN " << text;
    EXPECT_FALSE(authority.for_certificate(certificate(text))) << "subject " << text;
    // As the transport would give it: the CN's text, and so the subject's, never a typed name.
    EXPECT_FALSE(authority.for_certificate(CertificateNames{"CN=" + std::string(text), {}})) << text;
  }
  EXPECT_EQ(authority.for_certificate(certificate("CN=x", {"DNS:feed.example.com"}))->user(), "feed");
  EXPECT_EQ(authority.for_certificate(certificate("CN=x", {"URI:spiffe://example.com/feed"}))->user(), "spiffe");
}

}  // namespace
}  // namespace tw::auth
