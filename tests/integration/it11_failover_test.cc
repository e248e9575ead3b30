// Provider failover against a real broker: a provider process killed with
// SIGKILL, a provider that stops heart-beating, a provider that withdraws,
// and a service left with no provider. Subscribers only read: recovery is
// the broker's job.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "integration/it_providers_support.h"
#include "integration/it_support.h"
#include "testlib/fields.h"
#include "testlib/provider.h"

namespace tw::it {
namespace {

using testing::ForkedProvider;
using testing::ForkedProviderOptions;
using testing::InteractiveTimeouts;
using testing::ProviderClient;

BrokerOptions broker_with(std::vector<std::string> extra = {}) {
  BrokerOptions options;
  options.args = testing::interactive_args(InteractiveTimeouts{});
  options.args.insert(options.args.end(), extra.begin(), extra.end());
  return options;
}


std::string topic_of(int subscriber, int i) { return "SVC/S" + std::to_string(subscriber) + "/T" + std::to_string(i); }

// One subscriber connection with its exact topics and what it has seen.
struct Subscriber {
  RawClient client;
  StreamModel model;
  std::vector<std::string> topics;

  void open(uint16_t port, int index, int count) {
    std::string why;
    ASSERT_TRUE(open_client(client, port, "sub" + std::to_string(index), &why)) << why;
    for (int i = 0; i < count; ++i) {
      topics.push_back(topic_of(index, i));
      ASSERT_TRUE(client.send_subscribe(static_cast<uint32_t>(i + 1), topics.back()));
    }
  }
  // Reads until every topic satisfies `done`.
  bool read_until(const std::function<bool(const testing::ChannelModel&)>& done) {
    return testing::collect_until(client, model, [&] {
      for (const auto& t : topics) {
        const auto* ch = model.find(t);
        if (!ch || !done(*ch)) return false;
      }
      return true;
    });
  }
};

bool first_image(const testing::ChannelModel& ch) { return ch.images == 1; }
bool recovered(const testing::ChannelModel& ch) { return ch.images == 2 && ch.ok_statuses == 1; }

// Every topic went STALE exactly once, then got one fresh IMAGE from
// `new_provider` and one OK.
void expect_failed_over(const Subscriber& s, const std::string& new_provider) {
  EXPECT_TRUE(s.model.errors().empty()) << s.model.errors().front();
  for (const auto& t : s.topics) {
    const auto* ch = s.model.find(t);
    ASSERT_NE(ch, nullptr) << t;
    EXPECT_EQ(ch->stale_statuses, 1u) << t;
    EXPECT_EQ(ch->images, 2u) << t;
    EXPECT_EQ(ch->ok_statuses, 1u) << t;
    EXPECT_EQ(ch->state, wire::ChannelState::Ok) << t;
    EXPECT_EQ(ch->seq, ch->first_seq + 1) << t << ": the recovery IMAGE continues the seq";
    EXPECT_EQ(testing::string_field(ch->image, 2), new_provider) << t;
  }
}

TEST(ProviderFailover, SigkilledProviderProcessFailsOverAThousandChannels) {
  // Fork first: the test starts no thread before this.
  ForkedProvider a(ForkedProviderOptions{"A", "SVC", "", 0});
  ForkedProvider b(ForkedProviderOptions{"B", "SVC", "", 0});
  ASSERT_TRUE(a.forked() && b.forked());
  BrokerProcess broker(broker_with());
  ASSERT_TRUE(broker.ready()) << broker.err();
  ASSERT_TRUE(a.start(broker.port()));

  constexpr int kSubscribers = 10;
  constexpr int kTopics = 100;
  std::vector<Subscriber> subs(kSubscribers);
  for (int i = 0; i < kSubscribers; ++i) subs[i].open(broker.port(), i, kTopics);
  for (auto& s : subs) ASSERT_TRUE(s.read_until(first_image));
  for (auto& s : subs) {
    for (const auto& t : s.topics) ASSERT_EQ(testing::string_field(s.model.find(t)->image, 2), "A") << t;
  }

  ASSERT_TRUE(b.start(broker.port()));  // B arrives idle: every channel is A's
  a.kill();
  for (auto& s : subs) ASSERT_TRUE(s.read_until(recovered));
  uint64_t stale = 0, images = 0, ok = 0;
  for (auto& s : subs) {
    expect_failed_over(s, "B");
    for (const auto& [topic, ch] : s.model.channels()) {
      stale += ch.stale_statuses;
      images += ch.images - 1;
      ok += ch.ok_statuses;
    }
  }
  EXPECT_EQ(stale, 1000u);
  EXPECT_EQ(images, 1000u);
  EXPECT_EQ(ok, 1000u);
  // LIST_CHANNELS agrees: all on B.
  auto reply = subs[0].client.list_channels(999, "SVC");
  ASSERT_EQ(reply.rows.size(), 1000u);
  for (const auto& row : reply.rows) {
    EXPECT_EQ(row.provider.substr(0, 2), "B@") << row.topic;
    EXPECT_EQ(row.state, wire::ChannelState::Ok) << row.topic;
  }
}

TEST(ProviderFailover, SilentProviderTimesOutAndFailsOver) {
  BrokerProcess broker(broker_with({"--idle-timeout-ms", "400", "--heartbeat-ms", "5000"}));
  ASSERT_TRUE(broker.ready()) << broker.err();
  ProviderClient mute;
  open_provider(mute, broker.port(), "mute", "SVC", 100);  // idle limit: max(400, 3 x 100) ms
  Subscriber sub;
  sub.open(broker.port(), 0, 10);
  ASSERT_TRUE(mute.read_requests(10));
  ASSERT_TRUE(mute.answer_all());
  ASSERT_TRUE(mute.raw().send_heartbeat());
  ASSERT_TRUE(sub.read_until(first_image));
  ASSERT_TRUE(mute.raw().send_heartbeat());
  ProviderClient backup;
  open_provider(backup, broker.port(), "backup");  // broker default heartbeat: a 15 s idle limit
  // From here `mute` sends nothing at all.
  ASSERT_TRUE(backup.read_requests(10));
  ASSERT_TRUE(backup.answer_all());
  ASSERT_TRUE(sub.read_until(recovered));
  expect_failed_over(sub, "backup");
  auto code = mute.raw().wait_closed_with();
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, wire::Code::IdleTimeout);
}

TEST(ProviderFailover, WithdrawFailsOverAndTheOldStreamsBecomeStray) {
  BrokerProcess broker(broker_with());
  ASSERT_TRUE(broker.ready()) << broker.err();
  ProviderClient first;
  open_provider(first, broker.port(), "first");
  Subscriber sub;
  sub.open(broker.port(), 0, 5);
  ASSERT_TRUE(first.read_requests(5));
  ASSERT_TRUE(first.answer_all());
  ASSERT_TRUE(sub.read_until(first_image));
  ProviderClient second;
  open_provider(second, broker.port(), "second");

  auto ack = first.withdraw(2, "SVC");
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->code, wire::Code::Ok) << ack->text;
  ASSERT_TRUE(second.read_requests(5));
  ASSERT_TRUE(second.answer_all());
  ASSERT_TRUE(sub.read_until(recovered));
  expect_failed_over(sub, "second");
  // The old provider's late update is ignored; the new provider's arrives.
  ASSERT_TRUE(first.send_update(first.requests()[0].stream_id, testing::provider_update(666)));
  ASSERT_TRUE(second.send_update(second.requests()[0].stream_id, testing::provider_update(1)));
  ASSERT_TRUE(sub.read_until([](const testing::ChannelModel& ch) { return ch.images == 2; }));
  const std::string& t0 = second.requests()[0].topic;
  ASSERT_TRUE(testing::collect_until(sub.client, sub.model, [&] { return sub.model.find(t0)->updates == 1; }));
  EXPECT_EQ(testing::int_field(sub.model.find(t0)->image, 3), 1);
  EXPECT_TRUE(sub.model.errors().empty()) << sub.model.errors().front();
  // A withdrawn provider is not asked again, and a second WITHDRAW is refused.
  auto again = first.withdraw(3, "SVC");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->code, wire::Code::NotFound);
  EXPECT_TRUE(first.requests().size() == 5);
}

TEST(ProviderFailover, ChannelsStayStaleUntilAProviderArrives) {
  BrokerProcess broker(broker_with());
  ASSERT_TRUE(broker.ready()) << broker.err();
  Subscriber sub;
  {
    ProviderClient only;
    open_provider(only, broker.port(), "only");
    sub.open(broker.port(), 0, 3);
    ASSERT_TRUE(only.read_requests(3));
    ASSERT_TRUE(only.answer_all());
    ASSERT_TRUE(sub.read_until(first_image));
  }  // closes the only provider
  ASSERT_TRUE(sub.read_until([](const testing::ChannelModel& ch) { return ch.stale_statuses == 1; }));
  for (const auto& t : sub.topics) {
    EXPECT_EQ(sub.model.find(t)->status_code, wire::Code::ProviderLost) << t;
  }

  // While nobody provides: a late subscriber gets the cached image marked STALE,
  // and a new topic is STALE (NO_PROVIDER) from the start.
  Subscriber late;
  std::string why;
  ASSERT_TRUE(open_client(late.client, broker.port(), "late", &why)) << why;
  late.topics = {sub.topics[0], "SVC/NEW"};
  for (size_t i = 0; i < late.topics.size(); ++i) {
    auto ack = late.client.subscribe(static_cast<uint32_t>(i + 1), late.topics[i]);
    ASSERT_TRUE(ack && ack->code == wire::Code::Ok);
  }
  ASSERT_TRUE(late.read_until([](const testing::ChannelModel& ch) { return ch.state == wire::ChannelState::Stale; }));
  EXPECT_TRUE(late.model.find(sub.topics[0])->has_image);
  EXPECT_FALSE(late.model.find("SVC/NEW")->has_image);
  EXPECT_EQ(late.model.find("SVC/NEW")->status_code, wire::Code::NoProvider);

  ProviderClient rescuer;
  open_provider(rescuer, broker.port(), "rescuer");
  ASSERT_TRUE(rescuer.read_requests(4));  // three stale channels and SVC/NEW, one REQUEST each
  ASSERT_TRUE(rescuer.answer_all());
  ASSERT_TRUE(sub.read_until(recovered));
  expect_failed_over(sub, "rescuer");
  ASSERT_TRUE(late.read_until([](const testing::ChannelModel& ch) { return ch.ok_statuses == 1; }));
  EXPECT_EQ(testing::string_field(late.model.find("SVC/NEW")->image, 2), "rescuer");
  EXPECT_TRUE(late.model.errors().empty()) << late.model.errors().front();
  auto extra = rescuer.next_event(200);
  EXPECT_FALSE(extra) << "unexpected provider event for " << extra->topic;
}

}  // namespace
}  // namespace tw::it
