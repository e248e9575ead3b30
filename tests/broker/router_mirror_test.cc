// The router as an access point's mirror (docs/ARCHITECTURE.md, "Threads"):
// what changes a channel goes upstream, one interest per distinct pattern;
// the gateway's IMAGE / UPDATE / status records reach the local subscribers
// with the gateway's numbering and its encoded frame; the copy lives only
// while someone here receives the channel.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "output/fanout.h"
#include "broker/payloads.h"
#include "broker/recording_outlet.h"
#include "broker/mirrored_channels.h"
#include "broker/router.h"
#include "broker/upstream.h"
#include "tickwire/wire/codec.h"

namespace tw::broker {
namespace {

constexpr uint64_t kMs = 1'000'000;

// One call the router made upstream, with what it passed.
struct Call {
  std::string kind;   // interest, advertise, publish, provide, withdraw, provider_publish,
                      // provider_status, snapshot, list_channels, outlet_gone, subscribers_changed
  std::string text;   // pattern, topic or service
  std::string extra;  // provide: the pattern; provider_status: the text
  bool flag = false;  // interest: add; publish / provider_publish: image
  cache::ChannelId id = 0;
  uint32_t number = 0;  // request id, subscriber count
  Outlet* outlet = nullptr;
  std::vector<uint8_t> payload;
  wire::ChannelState state = wire::ChannelState::Ok;
};

// Stands for the gateways: records every call and names channels as the
// shared directory would (1, 2, 3 ..., the same id for the same topic).
class RecordingUpstream final : public Upstream {
 public:
  void interest(std::string_view pattern, bool add) override {
    calls.push_back({"interest", std::string(pattern), "", add});
  }
  bool settle(Outlet* outlet, std::span<const std::string_view> patterns, uint32_t request_id) override {
    for (std::string_view pattern : patterns) calls.push_back({"settle", std::string(pattern), "", false, 0, request_id, outlet});
    return true;
  }
  Outcome advertise(std::string_view topic, wire::PayloadKind, cache::ChannelId& out, Advertiser*) override {
    auto [it, added] = directory_.try_emplace(std::string(topic), static_cast<cache::ChannelId>(directory_.size() + 1));
    (void)added;
    out = it->second;
    calls.push_back({"advertise", std::string(topic), "", false, out});
    return {};
  }
  Outcome publish(cache::ChannelId id, std::span<const uint8_t> payload, bool image, const MessageOrigin&) override {
    Call c{"publish", "", "", image, id};
    c.payload.assign(payload.begin(), payload.end());
    calls.push_back(std::move(c));
    return {};
  }
  Outcome provide(Outlet* outlet, std::string_view service, std::string_view pattern) override {
    calls.push_back({"provide", std::string(service), std::string(pattern), false, 0, 0, outlet});
    return {};
  }
  Outcome withdraw(Outlet* outlet, std::string_view service) override {
    calls.push_back({"withdraw", std::string(service), "", false, 0, 0, outlet});
    return {};
  }
  void provider_publish(Outlet* outlet, cache::ChannelId id, std::span<const uint8_t> payload, bool image) override {
    Call c{"provider_publish", "", "", image, id, 0, outlet};
    c.payload.assign(payload.begin(), payload.end());
    calls.push_back(std::move(c));
  }
  void provider_status(Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code,
                       std::string_view text) override {
    Call c{"provider_status", "", std::string(text), false, id, 0, outlet};
    c.state = state;
    calls.push_back(std::move(c));
  }
  void snapshot(Outlet* outlet, std::string_view topic, uint32_t request_id) override {
    calls.push_back({"snapshot", std::string(topic), "", false, 0, request_id, outlet});
  }
  uint32_t shards() const override { return 1; }
  void list_channels(Outlet* outlet, std::string_view service, uint32_t request_id, uint32_t /*shard*/,
                     cache::ChannelId /*from*/) override {
    calls.push_back({"list_channels", std::string(service), "", false, 0, request_id, outlet});
  }
  void outlet_gone(Outlet* outlet) override { calls.push_back({"outlet_gone", "", "", false, 0, 0, outlet}); }
  void subscribers_changed(cache::ChannelId id, uint32_t count) override {
    calls.push_back({"subscribers_changed", "", "", false, id, count});
  }

  std::vector<Call> of(const std::string& kind) const {
    std::vector<Call> out;
    for (const Call& c : calls) {
      if (c.kind == kind) out.push_back(c);
    }
    return out;
  }
  // The interest calls, as "+pattern" / "-pattern".
  std::vector<std::string> interests() const {
    std::vector<std::string> out;
    for (const Call& c : of("interest")) out.push_back((c.flag ? "+" : "-") + c.text);
    return out;
  }
  // The last count reported for the channel; -1 if none was.
  int64_t last_count(cache::ChannelId id) const {
    int64_t count = -1;
    for (const Call& c : of("subscribers_changed")) {
      if (c.id == id) count = c.number;
    }
    return count;
  }

  std::vector<Call> calls;

 private:
  std::map<std::string, cache::ChannelId> directory_;
};

// Remembers which frame bytes each delivery carried, and the channel's seq then.
class FrameProbe final : public Outlet {
 public:
  struct Seen {
    const uint8_t* frame_data;
    size_t frame_size;
    uint64_t channel_seq;
    bool image;
  };
  void send_image(const cache::Channel& ch, uint32_t) override { images.push_back(ch.seq); }
  void send_delivery(const Delivery& d) override {
    auto frame = d.frames.get(native::NativeEncoder::instance());
    seen.push_back({frame.data(), frame.size(), d.channel.seq, d.image});
  }
  void flush_output() override {}
  std::string_view name() const override { return "probe"; }

  std::vector<uint64_t> images;
  std::vector<Seen> seen;
};

// A gateway's stream record: the encoded frame, whose tail is the payload.
struct GatewayFrame {
  std::vector<uint8_t> bytes;
  std::span<const uint8_t> payload;
};

GatewayFrame gateway_frame(cache::ChannelId id, uint64_t seq, const std::vector<uint8_t>& payload, bool image) {
  GatewayFrame f;
  const size_t fixed = image ? wire::kImageFixedSize : wire::kUpdateFixedSize;
  f.bytes.resize(fixed + payload.size());
  const size_t n = image ? wire::encode(f.bytes, wire::Image{id, seq, 0, payload})
                         : wire::encode(f.bytes, wire::Update{id, seq, payload});
  EXPECT_EQ(n, f.bytes.size());
  f.payload = std::span<const uint8_t>(f.bytes).subspan(fixed);
  return f;
}

class RouterMirrorTest : public ::testing::Test {
 protected:
  RouterMirrorTest() : mirror(router.attach_upstream(&upstream)) {}

  // The owning gateway sends one message of the channel: bid (field 22) = value.
  void gateway_sends(cache::ChannelId id, uint64_t seq, int64_t bid, bool image) {
    GatewayFrame f = gateway_frame(id, seq, int_field(22, bid), image);
    mirror.message(id, seq, f.payload, f.bytes, image);
  }
  std::vector<std::pair<std::string, uint64_t>> stream(const RecordingOutlet& o) const {
    std::vector<std::pair<std::string, uint64_t>> out;
    for (const Event& e : o.events) out.emplace_back(e.kind, e.seq);
    return out;
  }
  using Stream = std::vector<std::pair<std::string, uint64_t>>;

  uint64_t now = 1'000 * kMs;
  output::Fanout fanout{1 << 20};
  RecordingUpstream upstream;
  Router router{RouterLimits{}, fanout, [this] { return now; }};
  MirroredChannels& mirror;  // what the gateways' records feed
  RecordingOutlet a{fanout, "a"}, b{fanout, "b"}, c{fanout, "c"};
};

TEST_F(RouterMirrorTest, InterestIsSentOncePerDistinctPattern) {
  ASSERT_TRUE(router.is_mirror());
  ASSERT_TRUE(router.subscribe(&a, "A/>").ok());
  ASSERT_TRUE(router.subscribe(&b, "A/>").ok());
  ASSERT_TRUE(router.subscribe(&a, "A/>").ok());  // already held: nothing new
  EXPECT_EQ(upstream.interests(), (std::vector<std::string>{"+A/>"}));
  ASSERT_TRUE(router.subscribe(&b, "B/X").ok());
  ASSERT_TRUE(router.subscribe(&a, "A/*").ok());
  EXPECT_EQ(upstream.interests(), (std::vector<std::string>{"+A/>", "+B/X", "+A/*"}));
  ASSERT_TRUE(router.unsubscribe(&a, "A/>").ok());
  EXPECT_EQ(upstream.interests().size(), 3u);  // b still holds it
  ASSERT_TRUE(router.unsubscribe(&b, "A/>").ok());
  EXPECT_EQ(upstream.interests(), (std::vector<std::string>{"+A/>", "+B/X", "+A/*", "-A/>"}));
  EXPECT_EQ(router.unsubscribe(&b, "A/>").code, wire::Code::NotSubscribed);
  EXPECT_EQ(upstream.interests().size(), 4u);
  ASSERT_TRUE(router.subscribe(&c, "A/>").ok());  // held again: asked again
  EXPECT_EQ(upstream.interests().back(), "+A/>");
}

TEST_F(RouterMirrorTest, RefusedSubscriptionsAskForNothing) {
  EXPECT_EQ(router.subscribe(&a, "A//B").code, wire::Code::InvalidTopic);
  EXPECT_TRUE(upstream.interests().empty());
}

TEST_F(RouterMirrorTest, RemoveOutletDropsItsPatternsInterestAndTellsTheUpstream) {
  ASSERT_TRUE(router.subscribe(&a, "A/>").ok());
  ASSERT_TRUE(router.subscribe(&a, "B/>").ok());
  ASSERT_TRUE(router.subscribe(&b, "B/>").ok());
  router.remove_outlet(&a);
  auto gone = upstream.of("outlet_gone");
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].outlet, &a);
  EXPECT_EQ(upstream.interests(), (std::vector<std::string>{"+A/>", "+B/>", "-A/>"}));
  EXPECT_EQ(router.subscription_count(&a), 0u);
  router.remove_outlet(&b);
  EXPECT_EQ(upstream.interests().back(), "-B/>");
  EXPECT_EQ(upstream.of("outlet_gone").size(), 2u);
}

TEST_F(RouterMirrorTest, SubscribersGetTheGatewaysImageAndSeqs) {
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>").ok());
  mirror.channel(7, "NYSE/EQ/IBM", wire::PayloadKind::FieldList);
  EXPECT_TRUE(a.events.empty());  // no data yet
  gateway_sends(7, 41, 100, true);
  gateway_sends(7, 42, 101, false);
  gateway_sends(7, 45, 102, false);  // the gateway's numbering, gaps included
  EXPECT_EQ(stream(a), (Stream{{"image", 41}, {"update", 42}, {"update", 45}}));
  EXPECT_EQ(a.events[0].topic, "NYSE/EQ/IBM");
  const cache::Channel* ch = router.channel(7);
  ASSERT_NE(ch, nullptr);
  EXPECT_EQ(ch->id, 7u);
  EXPECT_EQ(ch->seq, 45u);
  EXPECT_EQ(ch->image.find(22)->i, 102);
  EXPECT_EQ(router.stats().publishes, 3u);
  // A late subscriber gets the copy's image, under the gateway's seq.
  ASSERT_TRUE(router.subscribe(&b, "NYSE/EQ/IBM").ok());
  EXPECT_EQ(stream(b), (Stream{{"image", 45}}));
  gateway_sends(7, 46, 103, false);
  EXPECT_EQ(stream(b), (Stream{{"image", 45}, {"update", 46}}));
  EXPECT_EQ(a.events.back().seq, 46u);
}

TEST_F(RouterMirrorTest, TheGatewaysFrameIsDeliveredAsIs) {
  FrameProbe probe;
  ASSERT_TRUE(router.subscribe(&probe, "NYSE/>").ok());
  mirror.channel(3, "NYSE/EQ/IBM", wire::PayloadKind::FieldList);
  gateway_sends(3, 10, 1, true);
  ASSERT_EQ(probe.images, (std::vector<uint64_t>{10}));
  EXPECT_TRUE(probe.seen.empty());  // the stream image was its first message
  GatewayFrame update = gateway_frame(3, 11, int_field(22, 2), false);
  mirror.message(3, 11, update.payload, update.bytes, false);
  ASSERT_EQ(probe.seen.size(), 1u);
  EXPECT_EQ(probe.seen[0].frame_data, update.bytes.data());  // zero copy: the gateway's bytes
  EXPECT_EQ(probe.seen[0].frame_size, update.bytes.size());
  EXPECT_EQ(probe.seen[0].channel_seq, 11u);
  EXPECT_FALSE(probe.seen[0].image);
  GatewayFrame refresh = gateway_frame(3, 12, int_field(22, 3), true);
  mirror.message(3, 12, refresh.payload, refresh.bytes, true);
  ASSERT_EQ(probe.seen.size(), 2u);
  EXPECT_EQ(probe.seen[1].frame_data, refresh.bytes.data());
  EXPECT_TRUE(probe.seen[1].image);
  EXPECT_EQ(router.channel(3)->image.find(22)->i, 3);
}

TEST_F(RouterMirrorTest, AnUpdateBeforeAnyImageIsIgnored) {
  ASSERT_TRUE(router.subscribe(&a, "NYSE/EQ/IBM").ok());
  mirror.channel(2, "NYSE/EQ/IBM", wire::PayloadKind::FieldList);
  gateway_sends(2, 5, 100, false);
  EXPECT_TRUE(a.events.empty());
  EXPECT_FALSE(router.channel(2)->has_data());
  EXPECT_EQ(router.stats().publishes, 0u);
  gateway_sends(2, 6, 101, true);
  gateway_sends(2, 7, 102, false);
  EXPECT_EQ(stream(a), (Stream{{"image", 6}, {"update", 7}}));
  EXPECT_EQ(router.channel(2)->image.find(22)->i, 102);
}

TEST_F(RouterMirrorTest, MessagesForAChannelNobodyHereReceivesAreIgnored) {
  mirror.channel(4, "LSE/EQ/VOD", wire::PayloadKind::FieldList);
  gateway_sends(4, 9, 100, true);
  EXPECT_FALSE(router.channel(4)->has_data());
  EXPECT_EQ(router.stats().publishes, 0u);
  gateway_sends(5, 9, 100, true);  // a channel it was never told of
  EXPECT_EQ(router.channel(5), nullptr);
  ASSERT_TRUE(router.subscribe(&a, "LSE/>").ok());
  EXPECT_TRUE(a.events.empty());  // nothing stale to show
  gateway_sends(4, 10, 101, true);
  EXPECT_EQ(stream(a), (Stream{{"image", 10}}));
}

TEST_F(RouterMirrorTest, TheCopyIsForgottenWhenTheLastSubscriberLeaves) {
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>").ok());
  ASSERT_TRUE(router.subscribe(&b, "NYSE/EQ/IBM").ok());
  mirror.channel(1, "NYSE/EQ/IBM", wire::PayloadKind::FieldList);
  gateway_sends(1, 10, 100, true);
  gateway_sends(1, 11, 101, false);
  ASSERT_TRUE(router.unsubscribe(&b, "NYSE/EQ/IBM").ok());
  EXPECT_TRUE(router.channel(1)->has_data());  // a still receives it
  ASSERT_TRUE(router.unsubscribe(&a, "NYSE/>").ok());
  EXPECT_FALSE(router.channel(1)->has_data());
  ASSERT_TRUE(router.subscribe(&c, "NYSE/EQ/IBM").ok());
  EXPECT_TRUE(c.events.empty());  // no stale image
  gateway_sends(1, 12, 102, false);  // in flight from before: not a start
  EXPECT_TRUE(c.events.empty());
  gateway_sends(1, 20, 110, true);
  gateway_sends(1, 21, 111, false);
  EXPECT_EQ(stream(c), (Stream{{"image", 20}, {"update", 21}}));
  EXPECT_EQ(router.channel(1)->image.find(22)->i, 111);
}

// A forgotten copy forgets its state too: the gateway will not repeat an OK
// it sent while nobody here listened (on a fresh interest it sends the IMAGE,
// and a STALE status only if the channel is still stale).
TEST_F(RouterMirrorTest, TheForgottenCopyKeepsNoStaleState) {
  ASSERT_TRUE(router.subscribe(&a, "X/Y").ok());
  mirror.channel(2, "X/Y", wire::PayloadKind::FieldList);
  gateway_sends(2, 5, 1, true);
  mirror.status(2, wire::ChannelState::Stale, wire::Code::ProviderLost, "provider lost");
  ASSERT_TRUE(router.unsubscribe(&a, "X/Y").ok());  // copy forgotten; the gateway recovers meanwhile
  ASSERT_TRUE(router.subscribe(&b, "X/Y").ok());
  EXPECT_TRUE(b.events.empty()) << "first event: " << b.events.front().kind;
  gateway_sends(2, 9, 2, true);  // what the gateway sends for a fresh interest on an OK channel
  EXPECT_EQ(router.channel(2)->state, wire::ChannelState::Ok);
  ASSERT_TRUE(router.subscribe(&c, "X/Y").ok());
  EXPECT_EQ(stream(c), (Stream{{"image", 9}}));
}

TEST_F(RouterMirrorTest, SubscribersChangedReportsTheLiveCount) {
  mirror.channel(3, "X/Y", wire::PayloadKind::FieldList);
  ASSERT_TRUE(router.subscribe(&a, "X/>").ok());
  EXPECT_EQ(upstream.last_count(3), 1);
  ASSERT_TRUE(router.subscribe(&b, "X/Y").ok());
  EXPECT_EQ(upstream.last_count(3), 2);
  ASSERT_TRUE(router.subscribe(&a, "X/*").ok());  // the same outlet again
  EXPECT_EQ(upstream.last_count(3), 2);
  ASSERT_TRUE(router.unsubscribe(&a, "X/>").ok());
  EXPECT_EQ(upstream.last_count(3), 2);  // X/* still covers it
  ASSERT_TRUE(router.unsubscribe(&a, "X/*").ok());
  EXPECT_EQ(upstream.last_count(3), 1);
  // A channel that appears later counts the subscribers it already has.
  ASSERT_TRUE(router.subscribe(&c, "X/>").ok());
  mirror.channel(8, "X/Z", wire::PayloadKind::FieldList);
  EXPECT_EQ(upstream.last_count(8), 1);
  router.remove_outlet(&b);
  EXPECT_EQ(upstream.last_count(3), 1);
  router.remove_outlet(&c);
  EXPECT_EQ(upstream.last_count(3), 0);
  EXPECT_EQ(upstream.last_count(8), 0);
}

TEST_F(RouterMirrorTest, StaleFansOutToEverySubscriber) {
  ASSERT_TRUE(router.subscribe(&a, "X/Y").ok());
  ASSERT_TRUE(router.subscribe(&b, "X/>").ok());
  mirror.channel(2, "X/Y", wire::PayloadKind::FieldList);
  gateway_sends(2, 5, 1, true);
  mirror.status(2, wire::ChannelState::Stale, wire::Code::ProviderLost, "provider lost");
  for (RecordingOutlet* o : {&a, &b}) {
    const Event* st = o->last("status");
    ASSERT_NE(st, nullptr);
    EXPECT_EQ(st->state, wire::ChannelState::Stale);
    EXPECT_EQ(st->code, wire::Code::ProviderLost);
  }
  EXPECT_EQ(router.channel(2)->state, wire::ChannelState::Stale);
  EXPECT_EQ(router.subscription_count(&a), 1u);
  // A newcomer learns it after the image.
  ASSERT_TRUE(router.subscribe(&c, "X/Y").ok());
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[0].kind, "image");
  EXPECT_EQ(c.events[1].state, wire::ChannelState::Stale);
  mirror.status(2, wire::ChannelState::Ok, wire::Code::Ok, "");
  EXPECT_EQ(a.last("status")->state, wire::ChannelState::Ok);
  EXPECT_EQ(router.channel(2)->state, wire::ChannelState::Ok);
}

TEST_F(RouterMirrorTest, ClosedEndsExactSubscriptionsAndKeepsWildcards) {
  ASSERT_TRUE(router.subscribe(&a, "X/Y").ok());
  ASSERT_TRUE(router.subscribe(&b, "X/>").ok());
  mirror.channel(2, "X/Y", wire::PayloadKind::FieldList);
  gateway_sends(2, 5, 1, true);
  mirror.status(2, wire::ChannelState::Closed, wire::Code::NotFound, "no such item");
  for (RecordingOutlet* o : {&a, &b}) {
    const Event* st = o->last("status");
    ASSERT_NE(st, nullptr);
    EXPECT_EQ(st->state, wire::ChannelState::Closed);
    EXPECT_EQ(st->code, wire::Code::NotFound);
  }
  EXPECT_EQ(router.subscription_count(&a), 0u);
  EXPECT_FALSE(router.delivers(&a, 2));
  EXPECT_EQ(router.subscription_count(&b), 1u);
  EXPECT_TRUE(router.delivers(&b, 2));
  EXPECT_EQ(upstream.interests(), (std::vector<std::string>{"+X/Y", "+X/>", "-X/Y"}));
  EXPECT_FALSE(router.channel(2)->has_data());
  EXPECT_EQ(router.channel(2)->state, wire::ChannelState::Ok);
  // Reopened: the wildcard gets a fresh image; the ended subscription nothing.
  const size_t a_events = a.events.size();
  gateway_sends(2, 9, 2, false);  // not a start
  gateway_sends(2, 10, 3, true);
  gateway_sends(2, 11, 4, false);
  EXPECT_EQ(a.events.size(), a_events);
  const Stream got = stream(b);
  ASSERT_GE(got.size(), 3u);
  EXPECT_EQ(Stream(got.end() - 2, got.end()), (Stream{{"image", 10}, {"update", 11}}));
}

TEST_F(RouterMirrorTest, SnapshotOfAHeldChannelIsAnsweredLocally) {
  ASSERT_TRUE(router.subscribe(&a, "X/Y").ok());
  mirror.channel(2, "X/Y", wire::PayloadKind::FieldList);
  gateway_sends(2, 5, 1, true);
  Outcome local = router.snapshot(&c, "X/Y", 77);
  EXPECT_TRUE(local.ok());
  EXPECT_FALSE(local.pending);
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].kind, "snapshot");
  EXPECT_EQ(c.events[0].seq, 5u);
  EXPECT_TRUE(upstream.of("snapshot").empty());
}

TEST_F(RouterMirrorTest, SnapshotWithoutDataHereGoesUpstream) {
  mirror.channel(2, "X/Y", wire::PayloadKind::FieldList);  // known, no data
  Outcome known = router.snapshot(&c, "X/Y", 78);
  EXPECT_TRUE(known.ok());
  EXPECT_TRUE(known.pending);
  Outcome unknown = router.snapshot(&c, "X/Z", 79);
  EXPECT_TRUE(unknown.ok());
  EXPECT_TRUE(unknown.pending);
  auto asked = upstream.of("snapshot");
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[0].text, "X/Y");
  EXPECT_EQ(asked[0].number, 78u);
  EXPECT_EQ(asked[0].outlet, &c);
  EXPECT_EQ(asked[1].text, "X/Z");
  EXPECT_EQ(asked[1].number, 79u);
  EXPECT_TRUE(c.events.empty());
  EXPECT_EQ(router.snapshot(&c, "X//Z", 80).code, wire::Code::InvalidTopic);  // checked here
  EXPECT_EQ(upstream.of("snapshot").size(), 2u);
}

TEST_F(RouterMirrorTest, ListChannelsGoesUpstream) {
  ASSERT_TRUE(router.subscribe(&a, "X/>").ok());
  mirror.channel(2, "X/Y", wire::PayloadKind::FieldList);
  gateway_sends(2, 5, 1, true);
  Outcome listed = router.list_channels(&c, "X", 12);
  EXPECT_TRUE(listed.ok());
  EXPECT_TRUE(listed.pending);
  auto asked = upstream.of("list_channels");
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].text, "X");
  EXPECT_EQ(asked[0].number, 12u);
  EXPECT_EQ(asked[0].outlet, &c);
  EXPECT_TRUE(c.events.empty());  // the gateways answer, not the mirror's partial view
}

TEST_F(RouterMirrorTest, AdvertiseAndPublishGoUpstream) {
  cache::ChannelId ibm = 0, vod = 0, again = 0;
  ASSERT_TRUE(router.advertise("NYSE/EQ/IBM", wire::PayloadKind::FieldList, ibm).ok());
  ASSERT_TRUE(router.advertise("LSE/EQ/VOD", wire::PayloadKind::FieldList, vod).ok());
  ASSERT_TRUE(router.advertise("NYSE/EQ/IBM", wire::PayloadKind::FieldList, again).ok());
  EXPECT_EQ(ibm, 1u);
  EXPECT_EQ(vod, 2u);
  EXPECT_EQ(again, 1u);
  EXPECT_EQ(router.channel_count(), 0u);  // the gateways own channels
  cache::ChannelId bad = 0;
  EXPECT_EQ(router.advertise("NYSE//IBM", wire::PayloadKind::FieldList, bad).code, wire::Code::InvalidTopic);
  EXPECT_EQ(upstream.of("advertise").size(), 3u);

  const auto payload = int_field(22, 7);
  ASSERT_TRUE(router.publish(vod, payload, true).ok());
  auto published = upstream.of("publish");
  ASSERT_EQ(published.size(), 1u);
  EXPECT_EQ(published[0].id, vod);
  EXPECT_TRUE(published[0].flag);
  EXPECT_EQ(published[0].payload, payload);
  EXPECT_EQ(router.stats().publishes, 0u);  // applied by the owner, not here
}

TEST_F(RouterMirrorTest, ProvidersGoUpstream) {
  ASSERT_TRUE(router.provide(&a, "SVC", "SVC/>").ok());
  auto provided = upstream.of("provide");
  ASSERT_EQ(provided.size(), 1u);
  EXPECT_EQ(provided[0].outlet, &a);
  EXPECT_EQ(provided[0].text, "SVC");
  EXPECT_EQ(provided[0].extra, "SVC/>");
  EXPECT_EQ(router.provide(&a, "SVC/X", "").code, wire::Code::InvalidTopic);  // checked here
  EXPECT_EQ(upstream.of("provide").size(), 1u);

  const auto payload = int_field(22, 5);
  ASSERT_TRUE(router.provider_publish(&a, 0x8000'0001u, payload, true).ok());
  auto sent = upstream.of("provider_publish");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].outlet, &a);
  EXPECT_EQ(sent[0].id, 0x8000'0001u);
  EXPECT_TRUE(sent[0].flag);
  EXPECT_EQ(sent[0].payload, payload);
  std::vector<uint8_t> malformed = payload;
  malformed.pop_back();
  EXPECT_EQ(router.provider_publish(&a, 0x8000'0001u, malformed, false).code, wire::Code::BadPayload);
  EXPECT_EQ(upstream.of("provider_publish").size(), 1u);

  ASSERT_TRUE(router.provider_status(&a, 0x8000'0001u, wire::ChannelState::Stale, wire::Code::ProviderLost, "x").ok());
  auto status = upstream.of("provider_status");
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0].state, wire::ChannelState::Stale);
  EXPECT_EQ(status[0].extra, "x");

  ASSERT_TRUE(router.withdraw(&a, "SVC").ok());
  auto withdrawn = upstream.of("withdraw");
  ASSERT_EQ(withdrawn.size(), 1u);
  EXPECT_EQ(withdrawn[0].outlet, &a);
  EXPECT_EQ(withdrawn[0].text, "SVC");
}

TEST_F(RouterMirrorTest, ExactSubscriptionsOpenNothingLocally) {
  ASSERT_TRUE(router.provide(&b, "SVC", "").ok());  // forwarded: no local service
  ASSERT_TRUE(router.subscribe(&a, "SVC/ITEM").ok());
  EXPECT_EQ(router.channel_count(), 0u);
  EXPECT_TRUE(b.events.empty());  // no REQUEST from the mirror
  EXPECT_EQ(upstream.interests(), (std::vector<std::string>{"+SVC/ITEM"}));
}

TEST_F(RouterMirrorTest, DelayedSubscriptionsRecordWhatTheGatewaySends) {
  auto run_until = [&](uint64_t until) {
    while (now < until) {
      now = std::min(until, now + 50 * kMs);
      router.on_tick();
    }
  };
  ASSERT_TRUE(router.subscribe(&a, "X/Y", SlowPolicy::Default, 0, 1'000).ok());
  EXPECT_EQ(upstream.interests(), (std::vector<std::string>{"+X/Y"}));
  mirror.channel(4, "X/Y", wire::PayloadKind::FieldList);
  EXPECT_EQ(router.delayed_stream_count(), 1u);
  // Told at once that the stream starts a delay after the recording does (the copy has no data yet).
  ASSERT_EQ(a.events.size(), 1u);
  EXPECT_EQ(a.events[0].code, wire::Code::DelayHistory);
  a.events.clear();
  gateway_sends(4, 49, 99, false);  // before the IMAGE: not recorded
  const uint64_t t0 = now;
  gateway_sends(4, 50, 100, true);
  EXPECT_EQ(router.channel(4)->seq, 50u);
  run_until(t0 + 2'000 * kMs);
  gateway_sends(4, 51, 101, false);
  const uint64_t t1 = now;
  ASSERT_EQ(a.events.size(), 1u);  // the image, 1 s after it came
  EXPECT_EQ(a.events[0].kind, "image");
  EXPECT_EQ(a.events[0].seq, 50u);
  run_until(t1 + 999 * kMs);
  EXPECT_EQ(a.events.size(), 1u);
  run_until(t1 + 1'000 * kMs);
  EXPECT_EQ(stream(a), (Stream{{"image", 50}, {"update", 51}}));
  cache::Channel* live = router.channel(4);
  EXPECT_EQ(live->seq, 51u);
  EXPECT_EQ(live->image.find(22)->i, 101);
  // Its last subscriber leaving ends the recording and forgets the copy.
  ASSERT_TRUE(router.unsubscribe(&a, "X/Y").ok());
  EXPECT_EQ(router.delayed_stream_count(), 0u);
  EXPECT_EQ(router.delayed_bytes(), 0u);
  EXPECT_FALSE(live->has_data());
  EXPECT_EQ(upstream.interests().back(), "-X/Y");
}

TEST_F(RouterMirrorTest, DelayedAndLiveSubscribersShareTheCopy) {
  ASSERT_TRUE(router.subscribe(&a, "X/>", SlowPolicy::Default, 0, 1'000).ok());
  ASSERT_TRUE(router.subscribe(&b, "X/>").ok());
  EXPECT_EQ(upstream.interests(), (std::vector<std::string>{"+X/>"}));
  mirror.channel(4, "X/Y", wire::PayloadKind::FieldList);
  EXPECT_EQ(upstream.last_count(4), 2);  // live and delayed subscribers: what LIST_CHANNELS shows
  gateway_sends(4, 50, 100, true);
  EXPECT_EQ(stream(b), (Stream{{"image", 50}}));
  ASSERT_EQ(a.events.size(), 1u) << "only the notice that the delayed stream starts later";
  EXPECT_EQ(a.events[0].code, wire::Code::DelayHistory);
  router.remove_outlet(&b);
  EXPECT_TRUE(router.channel(4)->has_data());  // the delayed subscriber still needs it
  gateway_sends(4, 51, 101, false);
  for (int i = 0; i < 30; ++i) {
    now += 100 * kMs;
    router.on_tick();
  }
  ASSERT_FALSE(a.events.empty());
  EXPECT_EQ(a.events.back().seq, 51u);
}

}  // namespace
}  // namespace tw::broker
