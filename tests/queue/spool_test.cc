// Spool: the store thread (src/queue/spool.h): fan-out to every matching
// queue, PUBLISH_ACK only after the sync, refusals, delivery and redelivery.
#include "queue/spool.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "store/store_dir.h"
#include "tickwire/wire/guaranteed.h"

namespace tw::queue {
namespace {

using store::testing::StoreDir;

config::QueueConfig queue_config(std::string name, std::string pattern) {
  config::QueueConfig q;
  q.name = std::move(name);
  q.subscriptions = {std::move(pattern)};
  return q;
}

// A connection's side: the frames its letters carried, decoded.
class Inbox final : public PortHandler {
 public:
  struct Answer {
    uint64_t message_id;
    wire::Code code;
    std::string text;
  };
  struct Delivery {
    uint32_t bind_id;
    uint64_t seq;
    std::string topic;
    std::string payload;
    bool redelivered;
  };
  void on_store_frames(std::span<const uint8_t> frames, uint32_t) override {
    wire::Frame f;
    while (!frames.empty() && wire::split_frame(frames, 1u << 30, f) == wire::SplitResult::Frame) {
      if (f.type == wire::MsgType::PublishAck) {
        wire::PublishAck m;
        EXPECT_TRUE(wire::decode(f, m));
        answers.push_back({m.message_id, m.code, std::string(m.text)});
      } else if (f.type == wire::MsgType::Deliver) {
        wire::Deliver m;
        EXPECT_TRUE(wire::decode(f, m));
        deliveries.push_back({m.bind_id, m.seq, std::string(m.topic), std::string(m.payload.begin(), m.payload.end()),
                              m.redelivered});
      } else if (f.type == wire::MsgType::Ack) {
        wire::Ack m;
        EXPECT_TRUE(wire::decode(f, m));
        bind_answers.push_back(m.code);
      }
      frames = frames.subspan(f.size);
    }
  }
  std::vector<Answer> answers;
  std::vector<Delivery> deliveries;
  std::vector<wire::Code> bind_answers;
};

class SpoolTest : public ::testing::Test {
 protected:
  SpoolTest() : dir_("spool-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    config_.store.dir = dir_.path();
    config_.queues = {queue_config("q1", "ORD/>"), queue_config("q2", "ORD/EU/*")};
    mailbox_ = std::make_shared<Mailbox>([this] {
      std::lock_guard lock(mutex_);
      ++wakes_;
      woken_.notify_all();
    });
    port_ = std::make_shared<Port>(Port{mailbox_, &inbox_});
  }
  ~SpoolTest() override { mailbox_->close(); }
  void start() {
    auto spool = Spool::open(config_);
    ASSERT_TRUE(spool.ok()) << spool.error().message;
    spool_ = std::move(*spool);
  }
  // Waits (bounded) until `done` holds over what the mailbox handed over.
  template <typename Done>
  bool wait_for(Done done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
      std::unique_lock lock(mutex_);
      woken_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(20)));
      lock.unlock();
      mailbox_->deliver_pending();
      if (std::chrono::steady_clock::now() > deadline) return done();
    }
    return true;
  }
  void publish(uint64_t id, std::string topic, std::string payload) {
    spool_->publish(port_, id, std::move(topic), std::vector<uint8_t>(payload.begin(), payload.end()));
  }

  StoreDir dir_;
  config::BrokerConfig config_;
  std::mutex mutex_;
  std::condition_variable woken_;
  int wakes_ = 0;
  std::shared_ptr<Mailbox> mailbox_;
  Inbox inbox_;
  std::shared_ptr<Port> port_;
  std::unique_ptr<Spool> spool_;
};

TEST_F(SpoolTest, FansOutToEveryMatchingQueueAndAnswersEachPublish) {
  start();
  publish(10, "ORD/EU/X", "both");
  publish(11, "ORD/US/X", "q1 only");
  publish(12, "OTHER/X", "none");
  ASSERT_TRUE(wait_for([&] { return inbox_.answers.size() == 3; }));
  for (const auto& a : inbox_.answers) EXPECT_EQ(a.code, wire::Code::Ok) << a.text;
  EXPECT_EQ(inbox_.answers[0].message_id, 10u);  // in the order they were published
  EXPECT_EQ(inbox_.answers[2].message_id, 12u);
  const Spool::Stats stats = spool_->stats();
  EXPECT_EQ(stats.unrouted, 1u);
  ASSERT_EQ(stats.queues.size(), 2u);
  EXPECT_EQ(stats.queues[0].depth, 2u);
  EXPECT_EQ(stats.queues[1].depth, 1u);

  spool_->bind(port_, 1, 10, "q1");
  spool_->bind(port_, 2, 10, "q2");
  ASSERT_TRUE(wait_for([&] { return inbox_.deliveries.size() == 3; }));
  EXPECT_EQ(inbox_.bind_answers, (std::vector<wire::Code>{wire::Code::Ok, wire::Code::Ok}));
  EXPECT_EQ(inbox_.deliveries[0].bind_id, 1u);
  EXPECT_EQ(inbox_.deliveries[0].payload, "both");
  EXPECT_EQ(inbox_.deliveries[1].payload, "q1 only");
  EXPECT_EQ(inbox_.deliveries[2].bind_id, 2u);
  EXPECT_EQ(inbox_.deliveries[2].topic, "ORD/EU/X");
}

TEST_F(SpoolTest, RefusesAWholeMessageWhenOneOfItsQueuesIsFull) {
  config_.queues[1].max_messages = 1;
  start();
  publish(1, "ORD/EU/X", "a");
  publish(2, "ORD/EU/X", "b");
  ASSERT_TRUE(wait_for([&] { return inbox_.answers.size() == 2; }));
  EXPECT_EQ(inbox_.answers[0].code, wire::Code::Ok);
  EXPECT_EQ(inbox_.answers[1].code, wire::Code::QueueFull);
  EXPECT_NE(inbox_.answers[1].text.find("q2"), std::string::npos) << inbox_.answers[1].text;
  const Spool::Stats stats = spool_->stats();
  EXPECT_EQ(stats.refused_full, 1u);
  EXPECT_EQ(stats.queues[1].counts.refused_full, 1u);
  EXPECT_EQ(stats.queues[0].depth, 1u);  // nothing of the refused message in q1 either
}

TEST_F(SpoolTest, BindToAnUnknownQueueIsRefused) {
  start();
  spool_->bind(port_, 1, 10, "nope");
  ASSERT_TRUE(wait_for([&] { return inbox_.bind_answers.size() == 1; }));
  EXPECT_EQ(inbox_.bind_answers[0], wire::Code::NotFound);
}

TEST_F(SpoolTest, ADetachedConnectionsMessagesGoToAnotherFlagged) {
  start();
  publish(1, "ORD/US/X", "m");
  Inbox other;
  auto other_port = std::make_shared<Port>(Port{mailbox_, &other});
  spool_->bind(port_, 1, 10, "q1");
  ASSERT_TRUE(wait_for([&] { return inbox_.deliveries.size() == 1; }));
  spool_->bind(other_port, 1, 10, "q1");
  spool_->detach(port_);
  ASSERT_TRUE(wait_for([&] { return other.deliveries.size() == 1; }));
  EXPECT_TRUE(other.deliveries[0].redelivered);
  EXPECT_FALSE(inbox_.deliveries[0].redelivered);
}

TEST_F(SpoolTest, RecoversQueuesAtOpen) {
  start();
  publish(1, "ORD/US/X", "kept");
  ASSERT_TRUE(wait_for([&] { return inbox_.answers.size() == 1; }));
  spool_.reset();
  start();
  spool_->bind(port_, 1, 10, "q1");
  ASSERT_TRUE(wait_for([&] { return inbox_.deliveries.size() == 1; }));
  EXPECT_EQ(inbox_.deliveries[0].payload, "kept");
  EXPECT_TRUE(inbox_.deliveries[0].redelivered);
}

}  // namespace
}  // namespace tw::queue
