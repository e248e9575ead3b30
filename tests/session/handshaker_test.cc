// The handshake thread: a connection whose handshake completes comes out
// through its Ready callback ready for application bytes; one that fails, or
// stays silent past the timeout, is closed and reported through on_failed.
// Waits are bounded by a generous deadline, never judged by their length.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "session/handshaker.h"
#include "session/tls_pair.h"
#include "testlib/test_pki.h"

namespace tw::session {
namespace {

class HandshakerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { pki_ = new tw::testing::TestPki(); }
  static void TearDownTestSuite() { delete pki_; }

  // Waits (at most 20 s, so a broken handshaker fails instead of hanging) until `done` holds.
  template <typename Predicate>
  bool wait_for(Predicate done) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(20), done);
  }
  void note(auto&& change) {
    std::lock_guard lock(mutex_);
    change();
    changed_.notify_all();
  }

  static tw::testing::TestPki* pki_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::unique_ptr<Transport> ready_;
  std::string ready_peer_;
  int failures_ = 0;
};
tw::testing::TestPki* HandshakerTest::pki_ = nullptr;

TEST_F(HandshakerTest, ACompletedHandshakeIsHandedOverReadyForBytes) {
  auto server = must(TlsContext::server({pki_->server_cert(), pki_->server_key(), ""}));
  auto client = must(TlsContext::client({pki_->ca(), "", ""}));
  TlsPair pair(*server, *client);
  Handshaker handshaker(10'000, [this] { note([&] { ++failures_; }); });
  handshaker.start();
  handshaker.add(std::move(pair.server), "peer-1", [this](std::unique_ptr<Transport> t, std::string peer) {
    note([&] { ready_ = std::move(t), ready_peer_ = std::move(peer); });
  });
  // The client's side runs here, on the test thread, until the server side is handed over.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    (void)pair.client->handshake();
    std::lock_guard lock(mutex_);
    if (ready_) break;
  }
  ASSERT_TRUE(wait_for([&] { return ready_ != nullptr; }));
  EXPECT_EQ(ready_peer_, "peer-1");
  EXPECT_EQ(ready_->handshake(), Handshake::Done);
  for (int i = 0; i < 2000 && pair.client->handshake() != Handshake::Done; ++i) {
  }
  EXPECT_EQ(TlsPair::send(*pair.client, "hello"), 5);
  std::string got;
  for (int i = 0; i < 2000 && got.size() < 5; ++i) got += TlsPair::drain(*ready_);
  EXPECT_EQ(got, "hello");
  EXPECT_EQ(failures_, 0);
}

TEST_F(HandshakerTest, PlaintextBytesFailTheHandshakeAndAreReported) {
  auto server = must(TlsContext::server({pki_->server_cert(), pki_->server_key(), ""}));
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  Handshaker handshaker(10'000, [this] { note([&] { ++failures_; }); });
  handshaker.start();
  handshaker.add(std::move(*TlsTransport::accept(*server, fds[0])), "plain",
                 [this](std::unique_ptr<Transport> t, std::string) { note([&] { ready_ = std::move(t); }); });
  const char hello[] = "\x00\x00\x00\x10not a TLS record";
  ASSERT_GT(::write(fds[1], hello, sizeof hello - 1), 0);
  EXPECT_TRUE(wait_for([&] { return failures_ == 1; }));
  EXPECT_EQ(ready_, nullptr);
  char buf[16];
  const ssize_t n = ::read(fds[1], buf, sizeof buf);  // unread bytes make a close a reset
  EXPECT_TRUE(n == 0 || (n < 0 && errno == ECONNRESET)) << "the handshaker closed the connection: " << n;
  ::close(fds[1]);
}

TEST_F(HandshakerTest, ASilentPeerIsClosedAtTheTimeout) {
  auto server = must(TlsContext::server({pki_->server_cert(), pki_->server_key(), ""}));
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  Handshaker handshaker(100, [this] { note([&] { ++failures_; }); });
  handshaker.start();
  handshaker.add(std::move(*TlsTransport::accept(*server, fds[0])), "silent",
                 [this](std::unique_ptr<Transport> t, std::string) { note([&] { ready_ = std::move(t); }); });
  EXPECT_TRUE(wait_for([&] { return failures_ == 1; }));
  EXPECT_EQ(ready_, nullptr);
  ::close(fds[1]);
}

TEST_F(HandshakerTest, StopClosesHandshakesInProgressAndReportsEach) {
  auto server = must(TlsContext::server({pki_->server_cert(), pki_->server_key(), ""}));
  std::vector<int> peers;
  {
    Handshaker handshaker(60'000, [this] { note([&] { ++failures_; }); });
    handshaker.start();
    for (int i = 0; i < 3; ++i) {
      int fds[2];
      ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
      peers.push_back(fds[1]);
      handshaker.add(std::move(*TlsTransport::accept(*server, fds[0])), "waiting",
                     [](std::unique_ptr<Transport>, std::string) {});
    }
    handshaker.stop();
  }
  EXPECT_EQ(failures_, 3);
  for (int fd : peers) ::close(fd);
}

}  // namespace
}  // namespace tw::session
