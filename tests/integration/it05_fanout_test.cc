// Fan-out: 1,000 subscriber connections on one pattern each receive every
// message of a publisher, in order.
#include <gtest/gtest.h>

#include <thread>

#include "integration/it_support.h"
#include "testlib/fields.h"

namespace tw::it {
namespace {

using wire::PayloadKind;

TEST(It05Fanout, ThousandSubscribersEachGetEveryMessageInOrder) {
  constexpr int kSubscribers = 1000;
  constexpr int kMessages = 100;
  constexpr int kReaders = 4;
  ASSERT_GE(testing::raise_fd_limit(), 2u * kSubscribers + 100) << "RLIMIT_NOFILE too low for this test";
  // Generous idle timeout: a subscriber stays silent while the others are set up.
  BrokerProcess broker({.args = {"--idle-timeout-ms", "300000"}});
  ASSERT_TRUE(broker.ready()) << broker.err();

  std::vector<RawClient> subs(kSubscribers);
  for (int i = 0; i < kSubscribers; ++i) {
    ASSERT_TRUE(subs[i].connect(broker.port())) << "subscriber " << i;
    ASSERT_TRUE(subs[i].send_hello("fan" + std::to_string(i)));
    ASSERT_TRUE(subs[i].send_subscribe(1, "FAN/>"));
  }
  for (int i = 0; i < kSubscribers; ++i) {
    auto welcome = subs[i].next_message();
    ASSERT_TRUE(welcome && welcome->type() == wire::MsgType::Welcome) << "subscriber " << i;
    auto ack = subs[i].next_message();
    ASSERT_TRUE(ack && ack->as<wire::Ack>() && ack->as<wire::Ack>()->code == wire::Code::Ok) << "subscriber " << i;
  }

  RawClient pub;
  std::string why;
  ASSERT_TRUE(open_client(pub, broker.port(), "pub", &why)) << why;
  ASSERT_TRUE(pub.register_topic(1, PayloadKind::FieldList, "FAN/X"));
  for (int m = 1; m <= kMessages; ++m) {
    ASSERT_TRUE(pub.publish(1, testing::field_list({{1, int64_t{m}}, {2, "m" + std::to_string(m)}})));
  }

  // Readers share the subscribers; each drains its share to the last message.
  std::vector<std::string> failures(kSubscribers);
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] {
      for (int i = r; i < kSubscribers; i += kReaders) {
        StreamModel model;
        bool done = testing::collect_until(subs[i], model, [&] {
          const auto* ch = model.find("FAN/X");
          return ch && ch->seq == static_cast<uint64_t>(kMessages);
        }, 60'000);
        const auto* ch = model.find("FAN/X");
        if (!done) {
          failures[i] = "did not receive all messages";
        } else if (!model.errors().empty()) {
          failures[i] = model.errors().front();
        } else if (ch->messages() != static_cast<uint64_t>(kMessages) || ch->first_seq != 1) {
          failures[i] = "received " + std::to_string(ch->messages()) + " messages from seq " +
                        std::to_string(ch->first_seq);
        } else if (testing::int_field(ch->image, 1) != kMessages) {
          failures[i] = "wrong final state " + testing::describe(ch->image);
        }
      }
    });
  }
  for (auto& t : readers) t.join();
  int failed = 0;
  for (int i = 0; i < kSubscribers; ++i) {
    if (failures[i].empty()) continue;
    if (++failed <= 5) ADD_FAILURE() << "subscriber " << i << ": " << failures[i];
  }
  EXPECT_EQ(failed, 0);
  EXPECT_TRUE(broker.alive());
}

}  // namespace
}  // namespace tw::it
