// admin::ask: a question runs on the loop thread that drains the inbox, and
// a loop that does not answer in time gives nullopt without harm when its
// answer comes later.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "admin/ask.h"

namespace tw::admin {
namespace {

// A stand-in for a loop thread: drains its inbox until stopped, as a loop does on its tick.
class DrainingThread {
 public:
  explicit DrainingThread(tier::LoopInbox& inbox)
      : thread_([this, &inbox] {
          while (!stop_.load()) {
            inbox.run_pending();
            std::this_thread::yield();
          }
        }) {}
  ~DrainingThread() {
    stop_.store(true);
    thread_.join();
  }
  std::thread::id id() const { return thread_.get_id(); }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(Ask, EveryInboxAnswersOnItsOwnThread) {
  tier::LoopInbox a, b;
  DrainingThread loop_a(a), loop_b(b);
  auto answers = ask_all<std::pair<size_t, std::thread::id>>(
      {&a, &b}, [](size_t i) { return std::pair{i, std::this_thread::get_id()}; }, std::chrono::seconds(30));
  ASSERT_TRUE(answers);
  ASSERT_EQ(answers->size(), 2u);
  EXPECT_EQ((*answers)[0], std::pair(size_t{0}, loop_a.id()));
  EXPECT_EQ((*answers)[1], std::pair(size_t{1}, loop_b.id()));
}

TEST(Ask, AnUnansweredQuestionGivesNulloptAndItsLateAnswerIsDropped) {
  tier::LoopInbox inbox;
  int runs = 0;
  auto answer = ask<int>(inbox, [&runs] { return ++runs; }, std::chrono::milliseconds(1));
  EXPECT_FALSE(answer);
  inbox.run_pending();  // the loop comes back: the job runs, its promise outlived the asker
  EXPECT_EQ(runs, 1);
  inbox.run_pending();  // and only once
  EXPECT_EQ(runs, 1);
}

}  // namespace
}  // namespace tw::admin
