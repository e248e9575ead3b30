#include "auth/authority.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
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
};

TEST_F(AuthorityTest, LoginsAreCheckedOffTheCallersThread) {
  write("");
  auto policy = Policy::load(path_);
  ASSERT_TRUE(policy.ok());
  Authority authority({path_, false, 0}, *policy);
  authority.start();
  auto good = wait(authority.authenticate("alice", "pw"));
  ASSERT_TRUE(good->grants);
  EXPECT_EQ(good->grants->user(), "alice");
  auto bad = wait(authority.authenticate("alice", "nope"));
  EXPECT_FALSE(bad->grants);
  auto unknown = wait(authority.authenticate("nobody", "pw"));
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

// Names as TlsTransport::peer_names gives them: the subject, then the SANs.
TEST_F(AuthorityTest, ACertificateMapsByItsSubjectItsCnOrASubjectAltName) {
  write("[users.feed]\ncertificates = [\"DNS:feed.example.com\"]\n"
        "[users.ops]\ncertificates = [\"CN=ops-1,O=Example\", \"URI:spiffe://example.com/ops\"]\n"
        "[users.bob]\ncertificates = [\"bob-laptop\"]\n");
  auto policy = Policy::load(path_);
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  Authority authority({path_, false, 0}, *policy);
  auto user = [&](std::vector<std::string> names) {
    auto grants = authority.for_certificate(names);
    return grants ? grants->user() : std::string("(none)");
  };
  EXPECT_EQ(user({"CN=ops-1,O=Example"}), "ops");                        // the full subject
  EXPECT_EQ(user({"CN=bob-laptop,O=Example"}), "bob");                   // its CN
  EXPECT_EQ(user({"CN=host-7", "email:x@example.com", "DNS:feed.example.com"}), "feed");  // a SAN
  EXPECT_EQ(user({"CN=ops-1,O=Example", "DNS:feed.example.com"}), "ops") << "the subject comes first";
  EXPECT_EQ(user({"CN=host-7", "URI:spiffe://example.com/ops", "DNS:feed.example.com"}), "ops")
      << "then the SANs in the certificate's order";
  EXPECT_EQ(user({"CN=feed.example.com"}), "(none)") << "a CN is not a DNS SAN";
  EXPECT_EQ(user({"CN=host-7", "DNS:other.example.com"}), "(none)");
  EXPECT_EQ(user({}), "(none)") << "no certificate";
}

}  // namespace
}  // namespace tw::auth
