// Delayed subscriptions in the router, on an injected clock: nothing reaches
// a delayed subscriber earlier than its delay, its image is the state as it
// was `delay` ago, after everything is due its merged state equals the live
// channel's final state, real-time subscribers do not notice, and new delayed
// subscriptions are refused past delay_max_bytes.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "output/fanout.h"
#include "broker/payloads.h"
#include "broker/recording_outlet.h"
#include "broker/router.h"
#include "tickwire/fields/field_list.h"
#include "tickwire/wire/codec.h"

namespace tw::broker {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kSec = 1'000 * kMs;

// Rebuilds, per channel id, the state the outlet's subscriber would hold, and
// remembers when each field value arrived.
class StateOutlet final : public Outlet {
 public:
  struct Arrival {
    cache::ChannelId id;
    bool image;
    uint64_t at_ns;
    uint64_t seq;
  };
  StateOutlet(output::Fanout& f, const uint64_t& now) : fanout_(f), now_(now) {}

  void send_image(const cache::Channel& ch, uint32_t) override { take_image(ch); }
  void send_stream_image(const cache::Channel& ch, SlowPolicy) override { take_image(ch); }
  void send_delivery(const Delivery& d) override {
    DecodedDelivery m;
    ASSERT_TRUE(decode_delivery(d, m));
    ASSERT_EQ(m.channel_id, d.channel.id);
    ASSERT_TRUE(d.image ? state[m.channel_id].replace(m.payload) : state[m.channel_id].merge(m.payload));
    arrive(m.channel_id, d.image, m.seq, m.payload);
    conflate_ms = d.conflate_ms;
    fanout_.mark_dirty(this);
  }
  void send_status(const cache::Channel& ch, wire::ChannelState st, wire::Code code, std::string_view text,
                   bool) override {
    statuses.emplace_back(ch.id, st);
    if (code == wire::Code::DelayHistory) history_notices.emplace_back(text);
  }
  void flush_output() override {}
  std::string_view name() const override { return "state"; }

  int64_t value(cache::ChannelId id, uint16_t field) const {
    auto it = state.find(id);
    if (it == state.end()) return -1;
    const auto* f = it->second.find(field);
    return f ? f->i : -1;
  }
  // The one delayed channel id this outlet was sent.
  cache::ChannelId delayed_id() const {
    for (const Arrival& a : arrivals) {
      if (a.id & kDelayedChannelBit) return a.id;
    }
    return 0;
  }

  std::map<cache::ChannelId, fields::FieldImage> state;
  std::vector<Arrival> arrivals;
  // Every value of field 22 received, with when it arrived.
  std::vector<std::pair<int64_t, uint64_t>> bids;
  std::vector<std::pair<cache::ChannelId, wire::ChannelState>> statuses;
  std::vector<std::string> history_notices;  // STATUS DELAY_HISTORY texts
  uint32_t conflate_ms = 0;

 private:
  void take_image(const cache::Channel& ch) {
    state[ch.id] = ch.image;
    const auto* f = ch.image.find(22);
    if (f) bids.emplace_back(f->i, now_);
    arrivals.push_back({ch.id, true, now_, ch.seq});
  }
  void arrive(cache::ChannelId id, bool image, uint64_t seq, std::span<const uint8_t> payload) {
    arrivals.push_back({id, image, now_, seq});
    fields::for_each(payload, [&](uint16_t fid, const fields::FieldValue& v) {
      if (fid == 22) bids.emplace_back(v.i, now_);
    });
  }
  output::Fanout& fanout_;
  const uint64_t& now_;
};

class RouterDelayTest : public ::testing::Test {
 protected:
  cache::ChannelId advertise(const std::string& topic) {
    cache::ChannelId id = 0;
    EXPECT_TRUE(router.advertise(topic, wire::PayloadKind::FieldList, id).ok());
    return id;
  }
  // Publishes bid (field 22) = the value, remembering when.
  void publish_bid(cache::ChannelId id, int64_t bid) {
    ASSERT_TRUE(router.publish(id, int_field(22, bid), false).ok());
    published_at[bid] = now;
  }
  // Advances the clock to `until` in 50 ms router ticks.
  void run_until(uint64_t until) {
    while (now < until) {
      now = std::min(until, now + 50 * kMs);
      router.on_tick();
    }
  }
  // Every bid the outlet received arrived at least `delay` after it was published.
  void expect_nothing_early(const StateOutlet& o, uint64_t delay) {
    for (const auto& [bid, at] : o.bids) {
      ASSERT_TRUE(published_at.count(bid)) << bid;
      EXPECT_GE(at, published_at[bid] + delay) << "bid " << bid << " arrived early";
    }
  }

  uint64_t now = 1 * kSec;
  static RouterLimits limits_with(size_t max_bytes) {
    RouterLimits l;
    l.delay_max_bytes = max_bytes;
    l.delay_bucket_ms = 1'000;
    return l;
  }
  RouterLimits limits = limits_with(1 << 20);
  output::Fanout fanout{1 << 20};
  Router router{limits, fanout, [this] { return now; }};
  StateOutlet delayed{fanout, now}, live{fanout, now}, late{fanout, now};
  std::map<int64_t, uint64_t> published_at;
};

TEST_F(RouterDelayTest, NothingArrivesBeforeTheDelay) {
  auto ibm = advertise("NYSE/EQ/IBM");
  publish_bid(ibm, 100);
  ASSERT_TRUE(router.subscribe(&delayed, "NYSE/EQ/IBM", SlowPolicy::Default, 0, 10'000).ok());
  EXPECT_TRUE(delayed.arrivals.empty());  // the delayed state does not exist yet
  const uint64_t subscribed = now;
  for (int64_t bid = 101; bid <= 130; ++bid) {
    run_until(now + 300 * kMs);
    publish_bid(ibm, bid);
  }
  run_until(subscribed + 10 * kSec - 1);
  EXPECT_TRUE(delayed.arrivals.empty());
  run_until(now + 30 * kSec);
  ASSERT_FALSE(delayed.bids.empty());
  // The state at subscription time counts as published then.
  published_at[100] = subscribed;
  expect_nothing_early(delayed, 10 * kSec);
  EXPECT_GE(delayed.bids.front().first, 100);
  EXPECT_EQ(delayed.bids.back().first, 130);
}

// Issue 29, item 3: a delayed subscriber is told at once when its stream starts, instead of a silent delay.
TEST_F(RouterDelayTest, ANewDelayedSubscriberIsToldAtOnceWhenItsStreamStarts) {
  auto ibm = advertise("NYSE/EQ/IBM");
  publish_bid(ibm, 100);
  ASSERT_TRUE(router.subscribe(&delayed, "NYSE/EQ/IBM", SlowPolicy::Default, 0, 10'000).ok());
  ASSERT_EQ(delayed.history_notices,
            (std::vector<std::string>{"no delayed history yet: the stream as it was 10 s ago starts in 10 s"}));
  EXPECT_TRUE(delayed.arrivals.empty());
  run_until(now + 4 * kSec);
  ASSERT_TRUE(router.subscribe(&late, "NYSE/>", SlowPolicy::Default, 0, 10'000).ok());
  EXPECT_EQ(late.history_notices,
            (std::vector<std::string>{"no delayed history yet: the stream as it was 10 s ago starts in 6 s"}));
  run_until(now + 7 * kSec);  // the stream has its first image now
  StateOutlet third{fanout, now};
  ASSERT_TRUE(router.subscribe(&third, "NYSE/EQ/IBM", SlowPolicy::Default, 0, 10'000).ok());
  EXPECT_TRUE(third.history_notices.empty());
  EXPECT_EQ(third.value(third.delayed_id(), 22), 100) << "the state as it was 10 s ago, at once";
  // A channel with no data yet starts a delay after its first message.
  advertise("NYSE/EQ/MSFT");
  StateOutlet quiet{fanout, now};
  ASSERT_TRUE(router.subscribe(&quiet, "NYSE/EQ/MSFT", SlowPolicy::Default, 0, 10'000).ok());
  EXPECT_EQ(quiet.history_notices,
            (std::vector<std::string>{
                "no delayed history yet: the stream as it was 10 s ago starts in 10 s at the earliest"}));
  // Live subscribers are never told.
  ASSERT_TRUE(router.subscribe(&live, "NYSE/>").ok());
  EXPECT_TRUE(live.history_notices.empty());
  router.remove_outlet(&third);
  router.remove_outlet(&quiet);
}

TEST_F(RouterDelayTest, TheDelayedImageIsTheStateAsOfTheDelayAgo) {
  auto ibm = advertise("NYSE/EQ/IBM");
  ASSERT_TRUE(router.subscribe(&delayed, "NYSE/>", SlowPolicy::Default, 0, 5'000).ok());
  std::map<uint64_t, int64_t> live_bid_at;  // time -> live bid from then on
  for (int64_t bid = 1; bid <= 100; ++bid) {
    publish_bid(ibm, bid);
    live_bid_at[now] = bid;
    run_until(now + 200 * kMs);
  }
  // 20 s of publishing: a late subscriber with the same delay gets the delayed copy's state.
  ASSERT_TRUE(router.subscribe(&late, "NYSE/EQ/IBM", SlowPolicy::Default, 0, 5'000).ok());
  const cache::ChannelId id = late.delayed_id();
  ASSERT_NE(id, 0u);
  EXPECT_EQ(id, delayed.delayed_id());  // one stream per (channel, delay)
  const int64_t image_bid = late.value(id, 22);
  EXPECT_NE(image_bid, router.channel(ibm)->image.find(22)->i);  // not the live state
  // It was the live bid at some time at least 5 s ago, and no older than 5 s plus one bucket.
  auto current_at = [&](uint64_t t) { return std::prev(live_bid_at.upper_bound(t))->second; };
  EXPECT_LE(image_bid, current_at(now - 5 * kSec));
  EXPECT_GE(image_bid, current_at(now - 6 * kSec));
  EXPECT_EQ(router.channel(id)->image.find(22)->i, image_bid);
  EXPECT_EQ(router.channel(id)->topic, "NYSE/EQ/IBM");
  expect_nothing_early(delayed, 5 * kSec);
}

TEST_F(RouterDelayTest, AfterEverythingIsDueTheMergedFieldsEqualTheFinalState) {
  auto ibm = advertise("NYSE/EQ/IBM");
  ASSERT_TRUE(router.subscribe(&delayed, "NYSE/EQ/IBM", SlowPolicy::Default, 0, 3'000).ok());
  uint64_t publishes = 0;
  for (int i = 0; i < 5'000; ++i) {  // 5 s at 1,000 updates per second, several fields
    std::vector<uint8_t> buf(64);
    fields::FieldListWriter w(buf);
    w.add_int(static_cast<uint16_t>(22 + i % 4), i);
    if (i % 7 == 0) w.add_int(40, -i);
    buf.resize(w.finish());
    ASSERT_TRUE(router.publish(ibm, buf, false).ok());
    ++publishes;
    now += kMs;
    if (i % 50 == 0) router.on_tick();
  }
  run_until(now + 10 * kSec);
  const cache::ChannelId id = delayed.delayed_id();
  ASSERT_NE(id, 0u);
  const auto& final_fields = router.channel(ibm)->image.fields();
  const auto& got = delayed.state.at(id).fields();
  ASSERT_EQ(got.size(), final_fields.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].id, final_fields[i].id);
    EXPECT_EQ(got[i].i, final_fields[i].i) << "field " << got[i].id;
  }
  // Merged per bucket: a handful of deliveries, not one per update; the last reaches the live seq.
  EXPECT_LE(delayed.arrivals.size(), 8u);
  EXPECT_EQ(delayed.arrivals.back().seq, router.channel(ibm)->seq);
  const cache::Channel& copy = *router.channel(id);
  EXPECT_EQ(router.delayed_bytes(), sizeof(cache::Channel) + DelayLine::held_bytes(copy.image, copy.image_size()));
}

TEST_F(RouterDelayTest, RealTimeSubscribersAreUnaffected) {
  auto ibm = advertise("NYSE/EQ/IBM");
  ASSERT_TRUE(router.subscribe(&live, "NYSE/EQ/IBM").ok());
  ASSERT_TRUE(router.subscribe(&delayed, "NYSE/EQ/IBM", SlowPolicy::Default, 0, 2'000).ok());
  for (int64_t bid = 1; bid <= 20; ++bid) {
    publish_bid(ibm, bid);
    ASSERT_EQ(live.bids.back().first, bid);  // at once
    ASSERT_EQ(live.bids.back().second, now);
    run_until(now + 100 * kMs);
  }
  for (size_t i = 1; i < live.arrivals.size(); ++i) {
    EXPECT_EQ(live.arrivals[i].seq, live.arrivals[i - 1].seq + 1);
    EXPECT_EQ(live.arrivals[i].id, ibm);
  }
  EXPECT_EQ(live.delayed_id(), 0u);
  EXPECT_FALSE(router.delivers(&delayed, ibm));
  EXPECT_TRUE(router.delivers(&live, ibm));
  run_until(now + 5 * kSec);
  EXPECT_EQ(delayed.value(delayed.delayed_id(), 22), 20);
  EXPECT_TRUE(router.delivers(&delayed, delayed.delayed_id()));
  EXPECT_FALSE(router.delivers(&live, delayed.delayed_id()));
}

TEST_F(RouterDelayTest, OneOutletCanHoldATopicLiveAndDelayed) {
  auto ibm = advertise("NYSE/EQ/IBM");
  ASSERT_TRUE(router.subscribe(&live, "NYSE/EQ/IBM").ok());
  ASSERT_TRUE(router.subscribe(&live, "NYSE/>", SlowPolicy::Drop, 250, 1'000).ok());
  publish_bid(ibm, 7);
  EXPECT_EQ(live.value(ibm, 22), 7);
  run_until(now + 2 * kSec);
  const cache::ChannelId id = live.delayed_id();
  ASSERT_NE(id, 0u);
  EXPECT_EQ(live.value(id, 22), 7);
  EXPECT_EQ(router.policy_of(&live, id), SlowPolicy::Drop);
  EXPECT_EQ(router.conflate_ms_of(&live, id), 250u);  // delay and conflation combine
  EXPECT_EQ(router.conflate_ms_of(&live, ibm), 0u);
}

TEST_F(RouterDelayTest, NewDelayedSubscriptionsAreRefusedPastTheBound) {
  limits = limits_with(50);
  Router tight{limits, fanout, [this] { return now; }};
  cache::ChannelId ibm = 0;
  ASSERT_TRUE(tight.advertise("NYSE/EQ/IBM", wire::PayloadKind::FieldList, ibm).ok());
  ASSERT_TRUE(tight.publish(ibm, int_field(22, 1), false).ok());
  ASSERT_TRUE(tight.subscribe(&delayed, "NYSE/EQ/IBM", SlowPolicy::Default, 0, 1'000).ok());
  EXPECT_GT(tight.delayed_bytes(), 50u);
  Outcome refused = tight.subscribe(&late, "NYSE/EQ/IBM", SlowPolicy::Default, 0, 1'000);
  EXPECT_EQ(refused.code, wire::Code::DelayCapacity);
  EXPECT_EQ(tight.check_subscribe(&late, "NYSE/>", 500).code, wire::Code::DelayCapacity);
  EXPECT_EQ(tight.subscription_count(&late), 0u);
  EXPECT_TRUE(tight.subscribe(&late, "NYSE/EQ/IBM").ok());  // real time is not limited
  // The existing delayed subscription continues.
  ASSERT_TRUE(tight.publish(ibm, int_field(22, 2), false).ok());
  for (int i = 0; i < 100; ++i) {
    now += 50 * kMs;
    tight.on_tick();
  }
  EXPECT_EQ(delayed.value(delayed.delayed_id(), 22), 2);
  // Once the recording is gone, there is room again.
  ASSERT_TRUE(tight.unsubscribe(&delayed, "NYSE/EQ/IBM").ok());
  EXPECT_EQ(tight.delayed_bytes(), 0u);
  EXPECT_TRUE(tight.subscribe(&late, "NYSE/>", SlowPolicy::Default, 0, 1'000).ok());
}

// Issue 18: one delayed subscription to ">" with a long delay grew without
// limit. Recording now compacts the oldest entries past delay_max_bytes:
// memory stays near the bound, nothing arrives early, and once everything is
// due the delayed state is the live one (intermediate updates merged away).
TEST_F(RouterDelayTest, AnExistingDelayedSubscriptionStaysWithinTheBound) {
  constexpr size_t kBound = 64 << 10;
  limits = limits_with(kBound);
  limits.delay_bucket_ms = 10;
  Router tight{limits, fanout, [this] { return now; }};
  std::vector<cache::ChannelId> ids(20);
  for (size_t c = 0; c < ids.size(); ++c) {
    ASSERT_TRUE(tight.advertise("NYSE/EQ/S" + std::to_string(c), wire::PayloadKind::FieldList, ids[c]).ok());
  }
  ASSERT_TRUE(tight.subscribe(&delayed, ">", SlowPolicy::Default, 0, 3'600'000).ok());
  size_t most = 0;
  const std::string text(200, 'x');
  for (int round = 0; round < 400; ++round) {  // 400 buckets x 20 channels x ~250 B: ~2 MB without the bound
    for (size_t c = 0; c < ids.size(); ++c) {
      std::vector<uint8_t> buf(512);
      fields::FieldListWriter w(buf);
      w.add_int(22, round);
      w.add_string(static_cast<uint16_t>(100 + round % 50), text);
      buf.resize(w.finish());
      ASSERT_TRUE(tight.publish(ids[c], buf, false).ok());
    }
    published_at[round] = now;
    now += 20 * kMs;
    tight.on_tick();
    most = std::max(most, tight.delayed_bytes());
  }
  EXPECT_GT(tight.stats().delay_compactions, 0u);
  // Within the bound, but for one merged entry per stream, which no compaction can shrink.
  EXPECT_LE(most, kBound + ids.size() * 16 * 1024) << most;
  EXPECT_TRUE(delayed.arrivals.empty());  // nothing early: the delay is an hour
  for (const uint64_t end = now + 3'601 * kSec; now < end;) {
    now += 50 * kMs;
    tight.on_tick();
  }
  size_t streams = 0;
  for (const auto& [id, image] : delayed.state) {
    if (!(id & kDelayedChannelBit)) continue;
    ++streams;
    EXPECT_EQ(delayed.value(id, 22), 399) << id;
  }
  EXPECT_EQ(streams, ids.size());
  EXPECT_LE(delayed.arrivals.size(), 2 * ids.size());  // merged: an image and a refresh per stream at most
  expect_nothing_early(delayed, 3'600 * kSec);
}

TEST_F(RouterDelayTest, TheRecordingEndsWithItsLastSubscriber) {
  auto ibm = advertise("NYSE/EQ/IBM");
  publish_bid(ibm, 1);
  ASSERT_TRUE(router.subscribe(&delayed, "NYSE/EQ/IBM", SlowPolicy::Default, 0, 1'000).ok());
  ASSERT_TRUE(router.subscribe(&late, "NYSE/>", SlowPolicy::Default, 0, 1'000).ok());
  ASSERT_TRUE(router.subscribe(&live, "NYSE/>", SlowPolicy::Default, 0, 2'000).ok());
  EXPECT_EQ(router.delayed_stream_count(), 2u);
  EXPECT_GT(router.delayed_bytes(), 0u);
  ASSERT_TRUE(router.unsubscribe(&delayed, "NYSE/EQ/IBM").ok());
  EXPECT_EQ(router.delayed_stream_count(), 2u);
  router.remove_outlet(&late);
  router.remove_outlet(&live);
  EXPECT_EQ(router.delayed_stream_count(), 0u);
  EXPECT_EQ(router.delayed_bytes(), 0u);
  publish_bid(ibm, 2);  // nothing records it
  EXPECT_EQ(router.delayed_bytes(), 0u);
}

TEST_F(RouterDelayTest, ChannelsCreatedLaterAreDelayedToo) {
  ASSERT_TRUE(router.subscribe(&delayed, "FX/>", SlowPolicy::Default, 0, 1'000).ok());
  auto eur = advertise("FX/EURUSD");
  publish_bid(eur, 5);
  run_until(now + 999 * kMs);
  EXPECT_TRUE(delayed.arrivals.empty());
  run_until(now + 1 * kMs);
  ASSERT_EQ(delayed.arrivals.size(), 1u);
  EXPECT_TRUE(delayed.arrivals[0].image);  // the first thing it hears of the stream is its image
  EXPECT_EQ(delayed.value(delayed.delayed_id(), 22), 5);
}

}  // namespace
}  // namespace tw::broker

namespace tw::broker {
namespace {

// Issue 29, item 3, its first half: a channel under [[delay_history]] is
// recorded from its creation, so a subscriber with that delay gets the state
// as it was then at once, even with nobody subscribed before it.
TEST_F(RouterDelayTest, UnderADelayHistoryTheStateAsItWasIsThereAtOnce) {
  RouterLimits with_history = limits;
  with_history.delay_history = {config::DelayHistory{{"NYSE/>"}, 10'000}};
  Router r{with_history, fanout, [this] { return now; }};
  auto publish = [&](cache::ChannelId id, int64_t bid) { ASSERT_TRUE(r.publish(id, int_field(22, bid), false).ok()); };
  auto run_for = [&](uint64_t ns) {
    for (const uint64_t until = now + ns; now < until;) {
      now = std::min(until, now + 50 * kMs);
      r.on_tick();
    }
  };
  cache::ChannelId ibm = 0, vod = 0;
  ASSERT_TRUE(r.advertise("NYSE/EQ/IBM", wire::PayloadKind::FieldList, ibm).ok());
  ASSERT_TRUE(r.advertise("LSE/EQ/VOD", wire::PayloadKind::FieldList, vod).ok());
  publish(ibm, 100);
  publish(vod, 100);
  run_for(12 * kSec);
  publish(ibm, 101);
  publish(vod, 101);
  ASSERT_TRUE(r.subscribe(&delayed, "NYSE/EQ/IBM", SlowPolicy::Default, 0, 10'000).ok());
  EXPECT_TRUE(delayed.history_notices.empty());
  EXPECT_EQ(delayed.value(delayed.delayed_id(), 22), 100) << "the state as it was 10 s ago, at once";
  // Another delay, or a channel outside the history: recorded from the subscription on, as before.
  ASSERT_TRUE(r.subscribe(&late, "NYSE/EQ/IBM", SlowPolicy::Default, 0, 5'000).ok());
  EXPECT_EQ(late.history_notices.size(), 1u);
  StateOutlet lse{fanout, now};
  ASSERT_TRUE(r.subscribe(&lse, "LSE/EQ/VOD", SlowPolicy::Default, 0, 10'000).ok());
  EXPECT_EQ(lse.history_notices.size(), 1u);
  run_for(11 * kSec);
  EXPECT_EQ(delayed.value(delayed.delayed_id(), 22), 101);
  // The recording outlives its subscribers, and holds the channel.
  r.remove_outlet(&delayed);
  r.remove_outlet(&late);
  r.remove_outlet(&lse);
  publish(ibm, 102);
  run_for(40 * kSec);  // past channel_linger_ms
  ASSERT_NE(r.channel(ibm), nullptr);
  publish(ibm, 103);
  StateOutlet again{fanout, now};
  ASSERT_TRUE(r.subscribe(&again, "NYSE/>", SlowPolicy::Default, 0, 10'000).ok());
  EXPECT_TRUE(again.history_notices.empty());
  EXPECT_EQ(again.value(again.delayed_id(), 22), 102);
  r.remove_outlet(&again);
}

}  // namespace
}  // namespace tw::broker
