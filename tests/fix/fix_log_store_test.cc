// tw::fix::LogStore (src/fix/log_store.h): what a restart finds in the log,
// a torn tail cut off, and what is written when. Compiled as C++14 (it
// includes QuickFIX). A second store opened on the same file while the first
// is alive reads what a process killed at that moment would restart from.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fix/engine.h"
#include "fix/log_store.h"

namespace tw {
namespace fix {
namespace {

class LogStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tw_log_store_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/sub/FIX.4.4-GW-C1.twlog";
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  std::unique_ptr<LogStore> open(LogStoreFlusher* flusher = nullptr) {
    return std::unique_ptr<LogStore>(new LogStore(path_, flusher));
  }
  off_t file_size() const {
    struct stat st;
    return ::stat(path_.c_str(), &st) == 0 ? st.st_size : -1;
  }
  // What QuickFIX's Session::persist does for each message it sends.
  static void send(LogStore& store, const std::string& text) {
    store.set(store.getNextSenderMsgSeqNum(), text);
    store.incrNextSenderMsgSeqNum();
  }
  static std::vector<std::string> get(const LogStore& store, int begin, int end) {
    std::vector<std::string> out;
    store.get(begin, end, out);
    return out;
  }

  std::string dir_, path_;
};

TEST_F(LogStoreTest, RestartResumesSequenceNumbersAndServesResends) {
  FIX::UtcTimeStamp created;
  {
    auto store = open();
    created = store->getCreationTime();
    send(*store, "8=FIX.4.4|34=1|");
    send(*store, "8=FIX.4.4|34=2|");
    send(*store, "8=FIX.4.4|34=3|");
    for (int i = 0; i < 5; ++i) store->incrNextTargetMsgSeqNum();
  }
  auto store = open();
  EXPECT_EQ(store->getNextSenderMsgSeqNum(), 4);
  EXPECT_EQ(store->getNextTargetMsgSeqNum(), 6);
  EXPECT_EQ(store->getCreationTime().getTimeT(), created.getTimeT());
  EXPECT_EQ(get(*store, 2, 3), (std::vector<std::string>{"8=FIX.4.4|34=2|", "8=FIX.4.4|34=3|"}));
  EXPECT_EQ(get(*store, 1, 100).size(), 3u);
  EXPECT_EQ(store->cut_at_open(), 0);
}

// set() is on disk when it returns (QuickFIX sends right after): a process
// killed then restarts past that sequence number and can resend the message.
TEST_F(LogStoreTest, SentMessageIsWrittenBeforeSetReturns) {
  auto store = open();
  send(*store, "first");
  store->set(2, "second");
  store->flush();  // as the flusher may, before QuickFIX's increment follows
  EXPECT_EQ(open()->getNextSenderMsgSeqNum(), 3);
  store->incrNextSenderMsgSeqNum();
  auto restarted = open();
  EXPECT_EQ(restarted->getNextSenderMsgSeqNum(), 3);
  EXPECT_EQ(get(*restarted, 1, 2), (std::vector<std::string>{"first", "second"}));
}

// Received messages' sequence numbers wait for the next set() or the
// flusher: one write for many.
TEST_F(LogStoreTest, TargetSequenceNumberRidesWithTheNextSentMessage) {
  auto store = open();
  const off_t before = file_size();
  for (int i = 0; i < 10; ++i) store->incrNextTargetMsgSeqNum();
  EXPECT_EQ(file_size(), before);  // no flusher: nothing written yet
  EXPECT_EQ(open()->getNextTargetMsgSeqNum(), 1);
  send(*store, "report");
  auto restarted = open();
  EXPECT_EQ(restarted->getNextTargetMsgSeqNum(), 11);
  EXPECT_EQ(restarted->getNextSenderMsgSeqNum(), 2);
}

TEST_F(LogStoreTest, FlusherWritesPendingTargetSequenceNumber) {
  LogStoreFlusher flusher(1);
  auto store = open(&flusher);
  for (int i = 0; i < 3; ++i) store->incrNextTargetMsgSeqNum();
  int seen = 1;
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
       seen != 4 && std::chrono::steady_clock::now() < deadline;
       std::this_thread::sleep_for(std::chrono::milliseconds(1)))
    seen = open()->getNextTargetMsgSeqNum();
  EXPECT_EQ(seen, 4);
}

TEST_F(LogStoreTest, TornTailIsCutAndTheRestKept) {
  {
    auto store = open();
    send(*store, "one");
    send(*store, "two");
  }
  const off_t whole = file_size();
  {
    auto store = open();
    send(*store, "three, torn");
  }
  ASSERT_EQ(::truncate(path_.c_str(), file_size() - 3), 0);  // the write cut short by a crash
  auto store = open();
  EXPECT_EQ(store->cut_at_open(), 9 + 4 + 11 - 3);  // header, seq, text, less what was cut
  EXPECT_EQ(file_size(), whole);
  EXPECT_EQ(store->getNextSenderMsgSeqNum(), 3);
  EXPECT_EQ(get(*store, 1, 10), (std::vector<std::string>{"one", "two"}));
  // It goes on from there, and the next open finds it all whole.
  send(*store, "three");
  store.reset();
  auto again = open();
  EXPECT_EQ(again->cut_at_open(), 0);
  EXPECT_EQ(get(*again, 1, 10), (std::vector<std::string>{"one", "two", "three"}));
}

TEST_F(LogStoreTest, RecordFailingItsCrcEndsTheLog) {
  off_t second_at = 0;
  {
    auto store = open();
    send(*store, "one");
    second_at = file_size();
    send(*store, "two");
    send(*store, "three");
  }
  {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(second_at + 9 + 4);  // the text of message 2
    f.put('X');
  }
  auto store = open();
  EXPECT_GT(store->cut_at_open(), 0);
  EXPECT_EQ(file_size(), second_at);
  EXPECT_EQ(store->getNextSenderMsgSeqNum(), 2);
  EXPECT_EQ(get(*store, 1, 10), (std::vector<std::string>{"one"}));
}

TEST_F(LogStoreTest, ResetStartsAFreshLog) {
  auto store = open();
  send(*store, "one");
  store->incrNextTargetMsgSeqNum();
  store->reset();
  EXPECT_EQ(store->getNextSenderMsgSeqNum(), 1);
  EXPECT_EQ(store->getNextTargetMsgSeqNum(), 1);
  EXPECT_TRUE(get(*store, 1, 10).empty());
  send(*store, "again");
  auto restarted = open();
  EXPECT_EQ(restarted->getNextSenderMsgSeqNum(), 2);
  EXPECT_EQ(restarted->getNextTargetMsgSeqNum(), 1);
  EXPECT_EQ(get(*restarted, 1, 10), (std::vector<std::string>{"again"}));
}

// A SequenceReset or a logon that resets: written at once, and later
// messages count from there.
TEST_F(LogStoreTest, ExplicitSequenceNumbersAreWrittenAtOnce) {
  auto store = open();
  send(*store, "one");
  store->setNextSenderMsgSeqNum(50);
  store->setNextTargetMsgSeqNum(70);
  auto restarted = open();
  EXPECT_EQ(restarted->getNextSenderMsgSeqNum(), 50);
  EXPECT_EQ(restarted->getNextTargetMsgSeqNum(), 70);
  store->setNextSenderMsgSeqNum(10);  // lower than a message in the log
  send(*store, "ten");
  restarted = open();
  EXPECT_EQ(restarted->getNextSenderMsgSeqNum(), 11);
  EXPECT_EQ(get(*restarted, 10, 10), (std::vector<std::string>{"ten"}));
}

class NoEvents : public EngineEvents {
 public:
  void on_logon(const std::string&) override {}
  void on_logout(const std::string&) override {}
  Verdict on_message(const std::string&, const FixMessage&, bool) override { return kAccepted; }
};

// A gateway upgraded onto a store_dir of QuickFIX FileStores must not start
// its sessions again at sequence number 1 in a fresh log.
TEST_F(LogStoreTest, GatewayRefusesToStartALogOverAFileStore) {
  SessionSpec spec;
  spec.name = "client1";
  spec.begin_string = "FIX.4.4";
  spec.sender_comp_id = "GW";
  spec.target_comp_id = "C1";
  spec.port = 1;  // never bound: the store is created first
  spec.store_dir = dir_ + "/client1";
  FIX::SessionID id("FIX.4.4", "GW", "C1");
  { FIX::FileStore old(spec.store_dir, id); }
  EXPECT_TRUE(file_store_exists(spec.store_dir, id));
  EXPECT_FALSE(log_store_exists(spec.store_dir, id));
  NoEvents events;
  std::string error;
  EXPECT_FALSE(make_engine({spec}, events)->start(&error));
  EXPECT_NE(error.find("holds a QuickFIX FileStore"), std::string::npos) << error;
  EXPECT_FALSE(log_store_exists(spec.store_dir, id));
}

}  // namespace
}  // namespace fix
}  // namespace tw
