// ClientRegistry: takeover flags, stored sessions and the handover of a
// taken-over connection's session to the connection that took it over, all
// by (user, client id): one user's client id is not another's.
#include "mqtt/client_registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>

namespace tw::mqtt {
namespace {

StoredSession with_filter(const std::string& filter) {
  StoredSession s;
  s.subscriptions.push_back({filter});
  s.expires_ns = UINT64_MAX;
  return s;
}

// Each test its own client id: the registry is process-wide.
std::string client_id() { return ::testing::UnitTest::GetInstance()->current_test_info()->name(); }
ClientKey id(const std::string& user = "") { return {user, client_id()}; }

TEST(ClientRegistry, AWaitingSuccessorGetsTheSessionHandedOver) {
  ClientRegistry r;
  std::atomic<bool> old_flag{false}, new_flag{false};
  EXPECT_FALSE(r.claim(id(), &old_flag));
  EXPECT_TRUE(r.claim(id(), &new_flag, true));
  EXPECT_TRUE(old_flag.load()) << "the old holder is told to go";
  EXPECT_FALSE(r.take_handover(id(), &new_flag).has_value()) << "nothing handed over yet";
  EXPECT_EQ(r.end(id(), &old_flag, with_filter("a/#"), 0), ClientRegistry::Ended::HandedOver);
  r.release(id(), &old_flag);  // the old connection is destroyed after it handed over
  auto handed = r.take_handover(id(), &new_flag);
  ASSERT_TRUE(handed.has_value());
  ASSERT_TRUE(handed->has_value());
  EXPECT_EQ((*handed)->subscriptions.at(0).filter, "a/#");
  EXPECT_FALSE(r.take(id(), 0).has_value()) << "handed over, not stored";
  r.release(id(), &new_flag);
}

TEST(ClientRegistry, ASessionThatEndsWithItsConnectionHandsOverNothing) {
  ClientRegistry r;
  std::atomic<bool> old_flag{false}, new_flag{false};
  r.claim(id(), &old_flag);
  r.claim(id(), &new_flag, true);
  EXPECT_EQ(r.end(id(), &old_flag, std::nullopt, 0), ClientRegistry::Ended::HandedOver);
  auto handed = r.take_handover(id(), &new_flag);
  ASSERT_TRUE(handed.has_value()) << "the wait ends";
  EXPECT_FALSE(handed->has_value()) << "with no session";
  r.release(id(), &new_flag);
}

TEST(ClientRegistry, ACleanSuccessorDropsTheOldSession) {
  ClientRegistry r;
  std::atomic<bool> old_flag{false}, new_flag{false};
  r.claim(id(), &old_flag);
  r.claim(id(), &new_flag, false);  // Clean Start 1
  EXPECT_EQ(r.end(id(), &old_flag, with_filter("a/#"), 0), ClientRegistry::Ended::Over);
  EXPECT_FALSE(r.take_handover(id(), &new_flag).has_value());
  r.release(id(), &new_flag);
  EXPECT_FALSE(r.take(id(), 0).has_value());
}

TEST(ClientRegistry, ASessionHandedOverToASuccessorTakenOverInTurnGoesToTheNewest) {
  ClientRegistry r;
  std::atomic<bool> a{false}, b{false}, c{false};
  r.claim(id(), &a);
  r.claim(id(), &b, true);
  r.end(id(), &a, with_filter("x"), 0);    // a ends before b took it
  r.claim(id(), &c, true);                 // c takes over b, which never answered its CONNECT
  EXPECT_TRUE(b.load());
  EXPECT_FALSE(r.take_handover(id(), &b).has_value());
  auto handed = r.take_handover(id(), &c);
  ASSERT_TRUE(handed.has_value() && handed->has_value());
  EXPECT_EQ((*handed)->subscriptions.at(0).filter, "x");
  r.release(id(), &b);
  r.release(id(), &c);
}

TEST(ClientRegistry, AHandoverAfterTheSuccessorLeftIsStoredAsAnEndedSession) {
  ClientRegistry r;
  std::atomic<bool> old_flag{false}, new_flag{false};
  r.claim(id(), &old_flag);
  r.claim(id(), &new_flag, true);
  r.release(id(), &new_flag);  // the successor gave up and went
  EXPECT_EQ(r.end(id(), &old_flag, with_filter("y"), 0), ClientRegistry::Ended::Kept);
  auto stored = r.take(id(), 0);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->subscriptions.at(0).filter, "y");
}

// The race of a connection that ends while a CONNECT of its client id
// arrives on another loop: whichever the registry sees first, the session
// is resumed (stored before the claim, or handed over after it), never lost.
TEST(ClientRegistry, AHolderThatEndsBeforeTheClaimIsStoredAndLeavesNoHolderToWaitFor) {
  ClientRegistry r;
  std::atomic<bool> old_flag{false}, new_flag{false};
  r.claim(id(), &old_flag);
  EXPECT_EQ(r.end(id(), &old_flag, with_filter("b/#"), 0), ClientRegistry::Ended::Kept);
  EXPECT_FALSE(r.claim(id(), &new_flag, true)) << "nobody holds it: the CONNECT takes the stored session";
  auto stored = r.take(id(), 0);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->subscriptions.at(0).filter, "b/#");
  r.release(id(), &old_flag);  // the old connection's destructor leaves the new holder in place
  EXPECT_TRUE(r.claim(id(), &old_flag)) << "the new holder was still registered";
  r.release(id(), &old_flag);
}

TEST(ClientRegistry, ASuccessorThatStoppedWaitingGetsNothingLater) {
  ClientRegistry r;
  std::atomic<bool> old_flag{false}, new_flag{false};
  r.claim(id(), &old_flag);
  r.claim(id(), &new_flag, true);
  r.stop_waiting(&new_flag);
  r.end(id(), &old_flag, with_filter("z"), 0);
  EXPECT_FALSE(r.take_handover(id(), &new_flag).has_value());
  r.release(id(), &new_flag);
  EXPECT_FALSE(r.take(id(), 0).has_value());
}

TEST(ClientRegistry, AnotherUsersClaimOfTheSameClientIdTakesNothingOver) {
  ClientRegistry r;
  std::atomic<bool> alice{false}, bob{false};
  EXPECT_FALSE(r.claim(id("alice"), &alice));
  EXPECT_FALSE(r.claim(id("bob"), &bob, true)) << "bob's session is another one";
  EXPECT_FALSE(alice.load()) << "alice's connection stays";
  EXPECT_FALSE(r.claim(id(), &bob, true)) << "nor does the anonymous user's";
  EXPECT_FALSE(alice.load());
  r.release(id("bob"), &bob);
  r.release(id(), &bob);
  r.release(id("alice"), &alice);
}

TEST(ClientRegistry, AStoredSessionIsOnlyItsUsersToResume) {
  ClientRegistry r;
  ASSERT_TRUE(r.store(id("alice"), with_filter("secret/#"), 0));
  EXPECT_FALSE(r.take(id("bob"), 0).has_value());
  EXPECT_FALSE(r.take(id(), 0).has_value()) << "anonymous is another user";
  auto stored = r.take(id("alice"), 0);
  ASSERT_TRUE(stored.has_value()) << "another user's attempt left it in place";
  EXPECT_EQ(stored->subscriptions.at(0).filter, "secret/#");
}

TEST(ClientRegistry, AHandoverGoesOnlyToTheSameUsersSuccessor) {
  ClientRegistry r;
  std::atomic<bool> alice{false}, bob{false}, alice_again{false};
  r.claim(id("alice"), &alice);
  r.claim(id("bob"), &bob, true);
  EXPECT_TRUE(r.claim(id("alice"), &alice_again, true));
  EXPECT_TRUE(alice.load());
  r.end(id("alice"), &alice, with_filter("a/#"), 0);
  r.release(id("alice"), &alice);
  EXPECT_FALSE(r.take_handover(id("bob"), &bob).has_value());
  auto handed = r.take_handover(id("alice"), &alice_again);
  ASSERT_TRUE(handed.has_value() && handed->has_value());
  EXPECT_EQ((*handed)->subscriptions.at(0).filter, "a/#");
  r.release(id("bob"), &bob);
  r.release(id("alice"), &alice_again);
}

TEST(ClientRegistry, KeysThatConcatenateAlikeAreDifferentUsers) {
  ClientRegistry r;
  ASSERT_TRUE(r.store({"ab", "c"}, with_filter("x"), 0));
  EXPECT_FALSE(r.take({"a", "bc"}, 0).has_value());
  EXPECT_TRUE(r.take({"ab", "c"}, 0).has_value());
}

}  // namespace
}  // namespace tw::mqtt
