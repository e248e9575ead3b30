// Providers that misbehave, against a real broker: stray messages are
// ignored and the provider stays connected; a malformed field list or a
// connection cut mid-frame fails over; a flood does not disturb other
// channels; an invalid PROVIDE is refused with INVALID_TOPIC.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "integration/it_providers_support.h"
#include "integration/it_support.h"
#include "testlib/fields.h"
#include "testlib/provider.h"

namespace tw::it {
namespace {

using testing::InteractiveTimeouts;
using testing::ProviderClient;

BrokerOptions broker_with(const InteractiveTimeouts& t = {}) {
  BrokerOptions options;
  options.args = testing::interactive_args(t);
  return options;
}




// The connection still answers requests: a LIST_CHANNELS round trip.
bool still_connected(RawClient& c) {
  auto reply = c.list_channels(4242, "NONE");
  return reply.ack && reply.ack->code == wire::Code::Ok;
}

const testing::ChannelModel& channel(const StreamModel& m, const std::string& topic) {
  static const testing::ChannelModel kNone;
  const auto* ch = m.find(topic);
  return ch ? *ch : kNone;
}

// Reads one REQUEST and checks its topic; returns its stream id (0 on failure).
uint32_t expect_request(ProviderClient& p, const std::string& topic) {
  auto event = p.next_event();
  EXPECT_TRUE(event && event->is_request()) << p.name() << " got no REQUEST for " << topic;
  if (!event || !event->is_request()) return 0;
  EXPECT_EQ(event->topic, topic);
  return event->stream_id;
}

TEST(ProviderBadInput, StrayMessagesAreIgnoredAndTheProviderStays) {
  BrokerProcess broker(broker_with());
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient pub;
  open_subscriber(pub, broker.port(), "pub");
  ASSERT_TRUE(pub.register_topic(1, wire::PayloadKind::FieldList, "NEWS/X"));
  ASSERT_TRUE(pub.publish(1, int_payload(0), true));
  ProviderClient p1, p2;
  open_provider(p1, broker.port(), "p1");
  RawClient sub, watcher;
  open_subscriber(sub, broker.port(), "sub");
  open_subscriber(watcher, broker.port(), "watcher");
  subscribe_ok(watcher, 1, "SVC/>");  // would see anything the broker wrongly accepted
  // p1's stray messages go to the gateways of the channels they name: only a
  // fence from p1 through every gateway says they have all been handled.
  const Fence fence("FENCE", 100);
  ASSERT_TRUE(fence.register_on(p1.raw()));
  ASSERT_TRUE(fence.subscribe(watcher, 10));
  ASSERT_TRUE(fence.subscribe(sub, 10));
  subscribe_ok(sub, 1, "NEWS/X");
  subscribe_ok(sub, 2, "SVC/A");
  uint32_t a = expect_request(p1, "SVC/A");
  ASSERT_TRUE(p1.answer(a));
  open_provider(p2, broker.port(), "p2");
  subscribe_ok(sub, 3, "SVC/B");  // p2 is the less loaded
  uint32_t b = expect_request(p2, "SVC/B");
  ASSERT_TRUE(p2.answer(b));
  StreamModel model, watched;
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return channel(model, "SVC/B").has_image; }));
  const uint32_t news = wire::kStreamIdBit | channel(model, "NEWS/X").channel_id;

  // p1: another provider's stream, a stream nobody opened, a broadcast channel, a status for B.
  const auto junk = testing::field_list({{1, int64_t{666}}, {2, std::string("junk")}});
  ASSERT_TRUE(p1.send_image(b, junk));
  ASSERT_TRUE(p1.send_update(b, junk));
  ASSERT_TRUE(p1.send_image(wire::kStreamIdBit | 5000, junk));
  ASSERT_TRUE(p1.send_update(news, junk));
  ASSERT_TRUE(p1.raw().send_stream_status(b, wire::ChannelState::Closed, wire::Code::NotFound, "not mine"));
  // p1 answers A twice: a refresh image is legal and delivered as an IMAGE.
  ASSERT_TRUE(p1.answer(a));
  // UPDATE before IMAGE on a fresh request is dropped.
  subscribe_ok(sub, 4, "SVC/C");
  uint32_t c = expect_request(p1, "SVC/C");
  ASSERT_TRUE(p1.send_update(c, junk));
  ASSERT_TRUE(p1.answer(c));
  ASSERT_TRUE(p2.send_update(b, testing::provider_update(1)));
  ASSERT_TRUE(pass_fence(pub, 1, sub, model, "NEWS/X"));
  ASSERT_TRUE(fence.pass(p1.raw(), sub, model));
  ASSERT_TRUE(fence.pass(p1.raw(), watcher, watched));
  ASSERT_TRUE(testing::collect_until(sub, model, [&] {
    return channel(model, "SVC/A").images == 2 && channel(model, "SVC/B").updates == 1 && channel(model, "SVC/C").has_image;
  }));
  EXPECT_TRUE(still_connected(p1.raw()));
  EXPECT_TRUE(still_connected(p2.raw()));

  // A released channel: late images and updates on its old stream are dropped.
  ASSERT_TRUE(sub.unsubscribe(5, "SVC/A"));
  auto release = p1.next_event();
  ASSERT_TRUE(release && !release->is_request());
  ASSERT_EQ(release->stream_id, a);
  ASSERT_TRUE(p1.send_image(a, junk));
  ASSERT_TRUE(p1.send_update(a, junk));
  ASSERT_TRUE(p2.send_update(b, testing::provider_update(2)));
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return channel(model, "SVC/B").updates == 2; }));
  ASSERT_TRUE(testing::collect_until(watcher, watched, [&] { return channel(watched, "SVC/B").updates == 2; }));
  ASSERT_TRUE(pass_fence(pub, 1, sub, model, "NEWS/X"));
  ASSERT_TRUE(fence.pass(p1.raw(), sub, model));
  ASSERT_TRUE(fence.pass(p1.raw(), watcher, watched));
  EXPECT_TRUE(still_connected(p1.raw()));

  for (const StreamModel* m : {&model, &watched}) {
    EXPECT_TRUE(m->errors().empty()) << m->errors().front();
    EXPECT_EQ(channel(*m, "SVC/B").images, 1u);
    EXPECT_EQ(testing::string_field(channel(*m, "SVC/B").image, 2), "p2");
    EXPECT_EQ(channel(*m, "SVC/B").state, wire::ChannelState::Ok);
    EXPECT_EQ(channel(*m, "SVC/C").images, 1u);
    EXPECT_EQ(channel(*m, "SVC/C").updates, 0u);
    EXPECT_EQ(testing::int_field(channel(*m, "SVC/A").image, 1), static_cast<int64_t>(a & ~wire::kStreamIdBit));
    EXPECT_EQ(channel(*m, "SVC/A").images, 2u);
    EXPECT_EQ(channel(*m, "SVC/A").updates, 0u);
  }
  EXPECT_EQ(model.find("SVC/5000"), nullptr);
  EXPECT_EQ(channel(model, "NEWS/X").updates + channel(model, "NEWS/X").images, 3u);  // image + two fences
}

TEST(ProviderBadInput, FloodingProviderDoesNotDisturbOtherChannels) {
  BrokerProcess broker(broker_with());
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient pub;
  open_subscriber(pub, broker.port(), "pub");
  ASSERT_TRUE(pub.register_topic(1, wire::PayloadKind::FieldList, "NEWS/X"));
  ProviderClient flood, calm;
  open_provider(flood, broker.port(), "flood");
  RawClient sub;
  open_subscriber(sub, broker.port(), "sub");
  subscribe_ok(sub, 1, "SVC/FLOOD");
  subscribe_ok(sub, 2, "NEWS/X");
  uint32_t f = expect_request(flood, "SVC/FLOOD");
  open_provider(calm, broker.port(), "calm");
  subscribe_ok(sub, 3, "SVC/CALM");
  uint32_t c = expect_request(calm, "SVC/CALM");
  ASSERT_TRUE(flood.answer(f));
  ASSERT_TRUE(calm.answer(c));
  ASSERT_TRUE(pub.publish(1, int_payload(0), true));

  constexpr int kFlood = 20'000;
  constexpr int kBatch = 500;
  constexpr int kCalm = 100;
  std::vector<uint8_t> batch;
  for (int i = 0; i < kFlood; i += kBatch) {
    batch.clear();
    for (int j = 0; j < kBatch; ++j) {
      auto payload = testing::provider_update(i + j + 1);
      wire::Publish m{f, false, payload};
      testing::append_frame(batch, wire::kPublishFixedSize + payload.size(),
                            [&](std::span<uint8_t> out) { return wire::encode(out, m); });
    }
    ASSERT_TRUE(flood.raw().send_raw(batch));
    const int k = i / kBatch;  // a calm update and a broadcast one per flood batch, up to kCalm
    if (k < kCalm) {
      ASSERT_TRUE(calm.send_update(c, testing::provider_update(k + 1)));
      ASSERT_TRUE(pub.publish(1, int_payload(k + 1)));
    }
  }
  for (int k = kFlood / kBatch; k < kCalm; ++k) {
    ASSERT_TRUE(calm.send_update(c, testing::provider_update(k + 1)));
    ASSERT_TRUE(pub.publish(1, int_payload(k + 1)));
  }
  StreamModel model;
  ASSERT_TRUE(testing::collect_until(sub, model, [&] {
    return channel(model, "SVC/FLOOD").updates == kFlood && channel(model, "SVC/CALM").updates == kCalm &&
           channel(model, "NEWS/X").updates == kCalm;
  }));
  EXPECT_TRUE(model.errors().empty()) << model.errors().front();  // seq order per channel
  EXPECT_EQ(testing::int_field(channel(model, "SVC/FLOOD").image, 3), kFlood);
  EXPECT_EQ(testing::int_field(channel(model, "SVC/CALM").image, 3), kCalm);
  EXPECT_EQ(testing::int_field(channel(model, "NEWS/X").image, 1), kCalm);
  EXPECT_TRUE(still_connected(flood.raw()));
}

TEST(ProviderBadInput, DisconnectMidImageFailsOverWithoutCorruption) {
  BrokerProcess broker(broker_with());
  ASSERT_TRUE(broker.ready()) << broker.err();
  ProviderClient cut;
  open_provider(cut, broker.port(), "cut");
  RawClient sub;
  open_subscriber(sub, broker.port(), "sub");
  for (uint32_t i = 1; i <= 3; ++i) subscribe_ok(sub, i, "SVC/M" + std::to_string(i));
  ASSERT_TRUE(cut.read_requests(3));
  ProviderClient good;
  open_provider(good, broker.port(), "good");
  // M1 and M2 are answered; M3's image is cut in the middle of its frame.
  ASSERT_TRUE(cut.answer(cut.requests()[0].stream_id));
  ASSERT_TRUE(cut.answer(cut.requests()[1].stream_id));
  StreamModel model;
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return channel(model, cut.requests()[1].topic).has_image; }));
  const auto payload = testing::provider_image(cut.requests()[2].stream_id, "cut");
  std::vector<uint8_t> frame(wire::kPublishFixedSize + payload.size());
  size_t n = wire::encode(frame, wire::Publish{cut.requests()[2].stream_id, true, payload});
  ASSERT_GT(n, 0u);
  ASSERT_TRUE(cut.raw().send_raw({frame.data(), n / 2}));
  cut.raw().close();

  ASSERT_TRUE(good.read_requests(3));
  ASSERT_TRUE(good.answer_all());
  ASSERT_TRUE(testing::collect_until(sub, model, [&] {
    for (int i = 1; i <= 3; ++i) {
      if (channel(model, "SVC/M" + std::to_string(i)).ok_statuses != 1) return false;
    }
    return true;
  }));
  EXPECT_TRUE(model.errors().empty()) << model.errors().front();
  for (int i = 1; i <= 3; ++i) {
    const auto& ch = channel(model, "SVC/M" + std::to_string(i));
    EXPECT_EQ(ch.stale_statuses, 1u) << ch.topic;
    EXPECT_EQ(testing::string_field(ch.image, 2), "good") << ch.topic;
    EXPECT_EQ(testing::int_field(ch.image, 1), static_cast<int64_t>(ch.channel_id)) << ch.topic;
  }
  EXPECT_EQ(channel(model, "SVC/M3").images, 1u);  // only the good provider's
}

TEST(ProviderBadInput, MalformedFieldListDisconnectsTheProviderAndFailsOver) {
  BrokerProcess broker(broker_with());
  ASSERT_TRUE(broker.ready()) << broker.err();
  ProviderClient bad;
  open_provider(bad, broker.port(), "bad");
  RawClient sub;
  open_subscriber(sub, broker.port(), "sub");
  subscribe_ok(sub, 1, "SVC/Z");
  uint32_t z = expect_request(bad, "SVC/Z");
  ASSERT_TRUE(bad.answer(z));
  StreamModel model;
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return channel(model, "SVC/Z").has_image; }));
  ProviderClient good;
  open_provider(good, broker.port(), "good");
  auto broken = testing::field_list({{2, std::string("truncated string")}});
  broken.resize(broken.size() - 3);
  ASSERT_TRUE(bad.send_update(z, broken));
  auto code = bad.raw().wait_closed_with();
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, wire::Code::BadPayload);
  EXPECT_EQ(expect_request(good, "SVC/Z"), z);
  ASSERT_TRUE(good.answer(z));
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return channel(model, "SVC/Z").ok_statuses == 1; }));
  EXPECT_TRUE(model.errors().empty()) << model.errors().front();
  EXPECT_EQ(channel(model, "SVC/Z").images, 2u);
  EXPECT_EQ(channel(model, "SVC/Z").updates, 0u);
  EXPECT_EQ(testing::string_field(channel(model, "SVC/Z").image, 2), "good");
}

TEST(ProviderBadInput, InvalidProvideIsRefusedWithInvalidTopic) {
  BrokerProcess broker(broker_with());
  ASSERT_TRUE(broker.ready()) << broker.err();
  ProviderClient p;
  std::string why;
  ASSERT_TRUE(p.open(broker.port(), "p", 0, &why)) << why;
  struct Case {
    std::string service, pattern;
  };
  uint32_t id = 10;
  for (const Case& k : {Case{"", ""}, Case{"A/B", ""}, Case{"*", ""}, Case{">", ""}, Case{"SVC", "OTHER/>"},
                        Case{"SVC", "SVC/>/X"}, Case{"SVC", "SVC//X"}, Case{std::string(300, 'S'), ""}}) {
    auto ack = p.provide(++id, k.service, k.pattern);
    ASSERT_TRUE(ack) << "no ACK for PROVIDE '" << k.service << "' '" << k.pattern << "'";
    EXPECT_EQ(ack->code, wire::Code::InvalidTopic) << "'" << k.service << "' '" << k.pattern << "'";
  }
  // Still connected, and a valid PROVIDE with a pattern limits what it is asked for.
  auto ok = p.provide(++id, "SVC", "SVC/OK/>");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->code, wire::Code::Ok) << ok->text;
  RawClient sub;
  open_subscriber(sub, broker.port(), "sub");
  subscribe_ok(sub, 1, "SVC/NO");
  subscribe_ok(sub, 2, "SVC/OK/1");
  EXPECT_NE(expect_request(p, "SVC/OK/1"), 0u);
  StreamModel model;
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return channel(model, "SVC/NO").stale_statuses == 1; }));
  EXPECT_EQ(channel(model, "SVC/NO").status_code, wire::Code::NoProvider);
}

}  // namespace
}  // namespace tw::it
