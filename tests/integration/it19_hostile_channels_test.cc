// Hostile clients against the channel, delay, text and provider parts of the
// broker (issue 18), each beside an innocent publisher and subscriber that
// must see every update, in order, while the attack runs.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "integration/it_providers_support.h"
#include "integration/it_support.h"
#include "testlib/fields.h"
#include "testlib/provider.h"

namespace tw::it {
namespace {

using testing::ProviderClient;

// A publisher and a subscriber of one topic that nothing should disturb.
class Innocent {
 public:
  void open(uint16_t port) {
    open_subscriber(pub_, port, "innocent-pub");
    open_subscriber(sub_, port, "innocent-sub");
    ASSERT_TRUE(pub_.register_topic(1, wire::PayloadKind::FieldList, kTopic));
    subscribe_ok(sub_, 1, kTopic);
    ASSERT_TRUE(pass_fence(pub_, 1, sub_, model_, kTopic));  // the channel exists and flows
  }
  // One update; the subscriber reads them at the end.
  void publish() { ASSERT_TRUE(pub_.publish(1, int_payload(++sent_))); }
  // Every update arrived, in order, nothing else broke.
  void check() {
    const uint64_t expected = static_cast<uint64_t>(sent_) + 1;  // + the opening fence
    ASSERT_TRUE(testing::collect_until(sub_, model_, [&] { return model_.messages_on(kTopic) >= expected; }));
    EXPECT_EQ(model_.messages_on(kTopic), expected);
    EXPECT_TRUE(model_.errors().empty()) << model_.errors().front();
  }

 private:
  static constexpr const char* kTopic = "INNOCENT/T";
  RawClient pub_, sub_;
  StreamModel model_;
  int64_t sent_ = 0;
};

// REGISTERs `count` new topics "prefix/i", then a SUBSCRIBE: its ACK comes
// only if every REGISTER before it was accepted (REGISTER has no ACK; a
// refused one closes the connection with an ERROR).
std::optional<wire::Code> register_topics(RawClient& c, const std::string& prefix, int count) {
  for (int i = 0; i < count; ++i) {
    if (!c.register_topic(static_cast<uint32_t>(i + 1), wire::PayloadKind::FieldList, prefix + "/" + std::to_string(i))) {
      break;
    }
  }
  auto ack = c.subscribe(999, prefix + "/fence", 5'000);
  if (ack) return ack->code;
  return c.wait_closed_with(5'000);
}

TEST(HostileChannels, OneConnectionCannotHoldTheChannelsAndLeftOnesAreFreed) {
  BrokerOptions options;
  options.args = {"--max-channels", "60", "--max-channels-per-connection", "25", "--channel-linger-ms", "1000"};
  BrokerProcess broker(options);
  ASSERT_TRUE(broker.ready()) << broker.err();
  Innocent innocent;
  innocent.open(broker.port());

  // One connection: refused at its quota, with a clear code.
  RawClient hog;
  open_subscriber(hog, broker.port(), "hog");
  EXPECT_EQ(register_topics(hog, "HOG", 26), wire::Code::ChannelQuota);
  innocent.publish();
  // Another client still creates topics.
  RawClient other;
  open_subscriber(other, broker.port(), "other");
  EXPECT_EQ(register_topics(other, "OTHER", 10), wire::Code::Ok);
  other.close();

  // Several hogs fill max_channels, then leave.
  std::vector<RawClient> hogs(3);
  for (size_t i = 0; i < hogs.size(); ++i) {
    open_subscriber(hogs[i], broker.port(), "hog" + std::to_string(i));
    register_topics(hogs[i], "HOGS" + std::to_string(i), 25);
    innocent.publish();
  }
  RawClient late;
  open_subscriber(late, broker.port(), "late");
  EXPECT_EQ(register_topics(late, "LATE", 1), wire::Code::TooManyChannels);
  for (auto& h : hogs) h.close();
  hog.close();

  // What they left is freed after the linger: new topics can be created again.
  std::optional<wire::Code> created;
  for (int attempt = 0; attempt < 40; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    innocent.publish();
    RawClient again;
    open_subscriber(again, broker.port(), "again");
    created = register_topics(again, "AGAIN", 20);
    if (created == wire::Code::Ok) break;
  }
  EXPECT_EQ(created, wire::Code::Ok);
  innocent.check();
}

// After a broker restart a subscriber may come back before its provider: its
// subscription is requested when the provider arrives.
TEST(HostileChannels, ASubscriptionMadeBeforeItsProviderIsRequestedWhenItArrives) {
  BrokerProcess broker(BrokerOptions{testing::interactive_args()});
  ASSERT_TRUE(broker.ready()) << broker.err();
  Innocent innocent;
  innocent.open(broker.port());
  RawClient sub;
  open_subscriber(sub, broker.port(), "early-sub");
  subscribe_ok(sub, 1, "SVC/IBM");
  innocent.publish();

  ProviderClient p;
  open_provider(p, broker.port(), "late-provider");
  auto request = p.next_event();
  ASSERT_TRUE(request && request->is_request());
  EXPECT_EQ(request->topic, "SVC/IBM");
  ASSERT_TRUE(p.answer(request->stream_id));
  ASSERT_TRUE(p.send_update(request->stream_id, testing::provider_update(1)));
  StreamModel model;
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return model.messages_on("SVC/IBM") == 2; }));
  EXPECT_TRUE(model.errors().empty()) << model.errors().front();
  innocent.publish();
  innocent.check();
}

}  // namespace
}  // namespace tw::it
