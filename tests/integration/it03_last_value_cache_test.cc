// The last-value cache: late subscribers get the merged image with the right
// seq, image and updates join without gap or duplicate under load, and
// kPublishImage replaces the cached image.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <thread>

#include "integration/it_support.h"
#include "testlib/fields.h"

namespace tw::it {
namespace {

using fields::Decimal;
using testing::collect_until;
using testing::field_list;
using wire::PayloadKind;

class LastValueCache : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(broker.ready()) << broker.err();
    std::string why;
    ASSERT_TRUE(open_client(pub, broker.port(), "pub", &why)) << why;
  }
  // A new subscriber to `pattern`; its first messages are read into `model`
  // until `topic` has an image.
  void late_subscriber(RawClient& sub, StreamModel& model, const std::string& pattern, const std::string& topic) {
    std::string why;
    ASSERT_TRUE(open_client(sub, broker.port(), "late", &why)) << why;
    auto ack = sub.subscribe(1, pattern);
    ASSERT_TRUE(ack && ack->code == wire::Code::Ok);
    ASSERT_TRUE(collect_until(sub, model, [&] { return model.find(topic) && model.find(topic)->has_image; }));
  }
  BrokerProcess broker;
  RawClient pub;
};

TEST_F(LastValueCache, LateSubscriberGetsTheMergedImageAndSeq) {
  ASSERT_TRUE(pub.register_topic(1, PayloadKind::FieldList, "LVC/IBM"));
  ASSERT_TRUE(pub.publish(1, field_list({{1, int64_t{10}}, {2, std::string("alpha")}})));
  ASSERT_TRUE(pub.publish(1, field_list({{1, int64_t{11}}})));
  ASSERT_TRUE(pub.publish(1, field_list({{3, Decimal{15, -1}}, {2, std::string("be")}})));

  RawClient sub;
  StreamModel model;
  ASSERT_NO_FATAL_FAILURE(late_subscriber(sub, model, "LVC/IBM", "LVC/IBM"));
  const auto* ch = model.find("LVC/IBM");
  EXPECT_EQ(ch->seq, 3u);
  EXPECT_EQ(ch->images, 1u);
  fields::FieldImage expected;
  ASSERT_TRUE(expected.replace(field_list({{1, int64_t{11}}, {2, std::string("be")}, {3, Decimal{15, -1}}})));
  std::string why;
  EXPECT_TRUE(testing::same_fields(ch->image, expected, &why)) << why;

  // The stream continues from the image's seq.
  ASSERT_TRUE(pub.publish(1, field_list({{1, int64_t{12}}})));
  ASSERT_TRUE(collect_until(sub, model, [&] { return model.find("LVC/IBM")->seq == 4; }));
  EXPECT_EQ(testing::int_field(model.find("LVC/IBM")->image, 1), 12);
  EXPECT_TRUE(model.errors().empty()) << model.errors().front();
}

TEST_F(LastValueCache, PublishImageReplacesTheCachedImage) {
  ASSERT_TRUE(pub.register_topic(1, PayloadKind::FieldList, "LVC/X"));
  RawClient live;
  std::string why;
  ASSERT_TRUE(open_client(live, broker.port(), "live", &why)) << why;
  ASSERT_TRUE(live.subscribe(1, "LVC/X"));
  ASSERT_TRUE(pub.publish(1, field_list({{1, int64_t{1}}, {2, int64_t{2}}, {3, int64_t{3}}})));
  // The stream's first IMAGE before the replacement: in thread tiers the ACK
  // may precede the owning gateway's taking the subscription, and both
  // publishes would then arrive as one IMAGE (docs/protocol.md, "Subscribing").
  StreamModel live_model;
  ASSERT_TRUE(reach_seq(live, live_model, "LVC/X", 1));
  ASSERT_TRUE(pub.publish(1, field_list({{4, int64_t{4}}}), /*image=*/true));

  // A live subscriber sees the replacement as a stream IMAGE with the next seq.
  ASSERT_TRUE(collect_until(live, live_model, [&] { auto* c = live_model.find("LVC/X"); return c && c->seq == 2; }));
  const auto* ch = live_model.find("LVC/X");
  EXPECT_EQ(ch->images, 2u) << "the replacement arrives as an IMAGE";
  fields::FieldImage expected;
  ASSERT_TRUE(expected.replace(field_list({{4, int64_t{4}}})));
  EXPECT_TRUE(testing::same_fields(ch->image, expected, &why)) << why;
  EXPECT_TRUE(live_model.errors().empty()) << live_model.errors().front();

  // A late subscriber gets only the replacement's fields.
  RawClient late;
  StreamModel late_model;
  ASSERT_NO_FATAL_FAILURE(late_subscriber(late, late_model, "LVC/>", "LVC/X"));
  EXPECT_EQ(late_model.find("LVC/X")->seq, 2u);
  EXPECT_TRUE(testing::same_fields(late_model.find("LVC/X")->image, expected, &why)) << why;
}

// Under a full-speed publisher, every subscriber, whenever it joins, sees per
// channel IMAGE seq S then S+1, S+2, ... and ends with the publisher's state.
// Field 1 counts the publishes on its topic, so it must equal the seq.
TEST_F(LastValueCache, ImageThenUpdatesHasNoGapOrDuplicateUnderLoad) {
  constexpr int kTopics = 20;
  constexpr int kUpdates = 200'000;
  constexpr int kPerTopic = kUpdates / kTopics;
  constexpr int kSubscribers = 6;
  auto topic = [](int t) { return "LOAD/T" + std::to_string(t); };
  for (int t = 0; t < kTopics; ++t) ASSERT_TRUE(pub.register_topic(t + 1, PayloadKind::FieldList, topic(t)));

  std::vector<fields::FieldImage> published(kTopics);
  std::atomic<int> progress{0};
  std::atomic<bool> publisher_ok{true};
  std::thread publisher([&] {
    std::vector<uint8_t> batch;
    for (int n = 0; n < kUpdates; ++n) {
      int t = n % kTopics;
      int64_t count = n / kTopics + 1;
      std::vector<testing::TestField> entries = {{1, count}, {2, Decimal{100'00 + n % 777, -2}}};
      if (n % 7 == 0) entries.push_back({3, "s" + std::to_string(n)});
      if (n % 1000 == t) entries.push_back({static_cast<uint16_t>(4 + t % 3), int64_t{n}});
      auto payload = field_list(entries);
      published[t].merge(payload);
      testing::append_frame(batch, wire::kPublishFixedSize + payload.size(), [&](std::span<uint8_t> out) {
        return wire::encode(out, wire::Publish{static_cast<uint32_t>(t + 1), false, payload});
      });
      if (batch.size() > 16 * 1024 || n + 1 == kUpdates) {
        if (!pub.send_raw(batch, 60'000)) publisher_ok = false;
        batch.clear();
        progress.store(n + 1);
      }
    }
  });

  // Subscriber k joins when the publisher has sent about k/kSubscribers of the
  // run (subscriber 0 before the first publish has been processed, most likely),
  // at a random point within that slice.
  std::mt19937 rng(12345);
  std::vector<int> join_at(kSubscribers);
  for (int k = 0; k < kSubscribers; ++k) {
    join_at[k] = k * kUpdates / kSubscribers + static_cast<int>(rng() % (kUpdates / kSubscribers / 2));
  }
  join_at[0] = 0;
  std::vector<StreamModel> models(kSubscribers);
  std::vector<std::string> failures(kSubscribers);
  std::vector<std::thread> subscribers;
  for (int k = 0; k < kSubscribers; ++k) {
    while (progress.load() < join_at[k] && progress.load() < kUpdates) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    subscribers.emplace_back([&, k] {
      RawClient sub;
      if (!open_client(sub, broker.port(), "sub" + std::to_string(k), &failures[k])) return;
      // Odd subscribers overlap two patterns, to check once-only delivery under load too.
      std::vector<std::string> patterns = {"LOAD/>"};
      if (k % 2 == 1) patterns.push_back("LOAD/*");
      uint32_t req = 1;
      for (const auto& p : patterns) {
        auto ack = sub.subscribe(req++, p);
        if (!ack || ack->code != wire::Code::Ok) failures[k] = "subscribe " + p + " refused";
      }
      StreamModel& model = models[k];
      auto all_final = [&] {
        if (model.channels().size() < kTopics) return false;
        for (const auto& [name, ch] : model.channels()) {
          if (ch.seq != static_cast<uint64_t>(kPerTopic)) return false;
        }
        return true;
      };
      if (!collect_until(sub, model, all_final, 90'000)) failures[k] = "did not reach the final seq of every topic";
    });
  }
  publisher.join();
  for (auto& s : subscribers) s.join();
  ASSERT_TRUE(publisher_ok.load());

  for (int k = 0; k < kSubscribers; ++k) {
    SCOPED_TRACE("subscriber " + std::to_string(k) + " joined at " + std::to_string(join_at[k]));
    EXPECT_EQ(failures[k], "");
    const StreamModel& model = models[k];
    EXPECT_TRUE(model.errors().empty()) << model.errors().front();
    EXPECT_EQ(model.channels().size(), static_cast<size_t>(kTopics));
    for (int t = 0; t < kTopics; ++t) {
      const auto* ch = model.find(topic(t));
      ASSERT_NE(ch, nullptr) << topic(t);
      EXPECT_EQ(ch->images, 1u) << topic(t);
      EXPECT_EQ(ch->first_seq + ch->updates, static_cast<uint64_t>(kPerTopic)) << topic(t);
      std::string why;
      EXPECT_TRUE(testing::same_fields(ch->image, published[t], &why)) << topic(t) << ": " << why;
    }
  }
  EXPECT_TRUE(broker.alive());
}

}  // namespace
}  // namespace tw::it

namespace tw::it {
namespace {

// Last values outlive their publishers (issue 29, item 1): a channel with a
// value is kept after channel_linger_ms, and evicted, oldest first, only when
// the broker's channels near max_channels (headroom: one channel here).
class KeptLastValues : public ::testing::Test {
 protected:
  void start(const std::string& max_channels) {
    broker_ = std::make_unique<BrokerProcess>(
        BrokerOptions{.args = {"--channel-linger-ms", "100", "--max-channels", max_channels}});
    ASSERT_TRUE(broker_->ready()) << broker_->err();
  }
  // A publisher publishes `topic`'s image and, once the broker has it, leaves (or stays, into `stay`).
  void publish_and_leave(const std::string& topic, int64_t value, RawClient* stay = nullptr) {
    RawClient own;
    RawClient& pub = stay ? *stay : own;
    ASSERT_TRUE(open_client(pub, broker_->port(), "pub-" + topic));
    ASSERT_TRUE(pub.register_topic(1, wire::PayloadKind::FieldList, topic));
    ASSERT_TRUE(pub.publish(1, int_payload(value), true));
    ASSERT_TRUE(pub.snapshot(2, topic).image) << "the broker has the value";
  }
  // Whether a fresh client's SNAPSHOT of `topic` finds a value.
  bool cached(const std::string& topic) {
    RawClient c;
    EXPECT_TRUE(open_client(c, broker_->port(), "snapshot"));
    auto reply = c.snapshot(1, topic);
    EXPECT_TRUE(reply.ack) << topic;
    return reply.ack && reply.ack->code == wire::Code::Ok && reply.image.has_value();
  }
  std::unique_ptr<BrokerProcess> broker_;
};

TEST_F(KeptLastValues, ALastValueOutlivesItsPublisher) {
  ASSERT_NO_FATAL_FAILURE(start("100"));
  ASSERT_NO_FATAL_FAILURE(publish_and_leave("KEEP/A", 7));
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // several lingers
  EXPECT_TRUE(cached("KEEP/A")) << "the value went with its publisher";
}

TEST_F(KeptLastValues, NearTheLimitTheOldestAreEvicted) {
  ASSERT_NO_FATAL_FAILURE(start("4"));
  for (int i = 0; i < 3; ++i) {
    ASSERT_NO_FATAL_FAILURE(publish_and_leave("KEEP/" + std::to_string(i), i));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // kept, in this order
  }
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(cached("KEEP/" + std::to_string(i))) << i;
  RawClient live;
  ASSERT_NO_FATAL_FAILURE(publish_and_leave("LIVE/0", 9, &live));  // 4 of 4: within the headroom
  std::vector<bool> kept(3, true);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(testing::kDefaultTimeoutMs);
  while (std::count(kept.begin(), kept.end(), true) == 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (int i = 0; i < 3; ++i) kept[i] = cached("KEEP/" + std::to_string(i));
  }
  EXPECT_LT(std::count(kept.begin(), kept.end(), true), 3) << "nothing was evicted near max_channels";
  EXPECT_TRUE(cached("LIVE/0")) << "a channel in use is never evicted";
  // One owner of every channel: it evicts the oldest exactly (a tiered
  // broker's gateways each evict the oldest of their own).
  if (gateways_under_test() == 1) {
    EXPECT_EQ(kept, (std::vector<bool>{false, true, true}));
  }
}

}  // namespace
}  // namespace tw::it
