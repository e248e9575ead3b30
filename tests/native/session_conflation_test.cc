// NativeSession's conflated subscriptions (SUBSCRIBE conflate_ms), in process:
// a real session on a socketpair, the real router and fanout, ticks driven by
// hand with chosen clock values (so no test depends on how fast it runs).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "base/clock.h"
#include "broker/counters.h"
#include "output/fanout.h"
#include "native/native_session.h"
#include "broker/router.h"
#include "native/session_harness.h"
#include "tickwire/fields/field_list.h"
#include "testlib/fields.h"
#include "reactor/reactor.h"
#include "tickwire/wire/codec.h"

namespace tw::broker {
namespace {

constexpr int kChannels = 10;
constexpr uint32_t kIntervalMs = 200;
constexpr uint64_t kMs = 1'000'000;

std::vector<uint8_t> quote(int64_t value) { return tw::testing::field_list({{22, value}}); }

template <typename Msg, typename... Type>
std::vector<uint8_t> frame_of(const Msg& m, Type... type) {
  std::vector<uint8_t> buf(256);
  buf.resize(wire::encode(buf, type..., m));
  return buf;
}

int64_t value_of(std::span<const uint8_t> payload) {
  fields::FieldImage image;
  EXPECT_TRUE(image.merge(payload));
  for (const auto& field : image.fields()) {
    if (field.id == 22) return field.i;
  }
  return -1;
}

// Per channel, what the peer received.
struct Received {
  uint64_t images = 0;
  uint64_t updates = 0;
  uint64_t seq = 0;
  int64_t value = 0;
};

class SessionConflationTest : public ::testing::Test, protected testing::SessionHarness {
 protected:
  void SetUp() override {
    open(RouterLimits{}, monotonic_ns());
    for (int i = 0; i < kChannels; ++i) {
      cache::ChannelId id = 0;
      ASSERT_TRUE(router->advertise("T/" + std::to_string(i), wire::PayloadKind::FieldList, id).ok());
      ids.push_back(id);
      ASSERT_TRUE(router->publish(id, quote(0), false).ok());
    }
    send(frame_of(wire::Hello{1, 1, 0, "conflated"}));
  }

  void subscribe(uint32_t request_id, std::string_view pattern, uint32_t conflate_ms) {
    send(frame_of(wire::Subscribe{request_id, pattern, wire::SlowPolicy::Default, conflate_ms},
                  wire::MsgType::Subscribe));
    turn();
  }
  void tick(uint64_t now_ns) {
    session->on_tick(now_ns);
    turn();
  }
  void publish_rounds(int rounds) {
    for (int r = 0; r < rounds; ++r) {
      ++round;
      for (cache::ChannelId id : ids) ASSERT_TRUE(router->publish(id, quote(round), false).ok());
      turn();
    }
  }
  void read_available() {
    uint8_t buf[65536];
    for (;;) {
      ssize_t n = ::read(peer, buf, sizeof buf);
      if (n <= 0) break;
      in.insert(in.end(), buf, buf + n);
    }
    size_t pos = 0;
    wire::Frame f;
    while (wire::split_frame({in.data() + pos, in.size() - pos}, 1u << 20, f) == wire::SplitResult::Frame) {
      apply(f);
      pos += f.size;
    }
    in.erase(in.begin(), in.begin() + static_cast<long>(pos));
  }
  void apply(const wire::Frame& f) {
    if (f.type == wire::MsgType::Image) {
      wire::Image m;
      ASSERT_TRUE(wire::decode(f, m));
      EXPECT_EQ(m.request_id, 0u);
      Received& c = got[m.channel_id];
      EXPECT_GE(m.seq, c.seq);
      ++c.images;
      c.seq = m.seq;
      c.value = value_of(m.payload);
    } else if (f.type == wire::MsgType::Update) {
      wire::Update m;
      ASSERT_TRUE(wire::decode(f, m));
      Received& c = got[m.channel_id];
      EXPECT_EQ(m.seq, c.seq + 1) << "an update out of order on channel " << m.channel_id;
      ++c.updates;
      c.seq = m.seq;
      c.value = value_of(m.payload);
    }
  }

  std::vector<cache::ChannelId> ids;
  int64_t round = 0;
  std::vector<uint8_t> in;
  std::map<uint32_t, Received> got;
};

TEST_F(SessionConflationTest, UpdatesAreHeldAndMergedIntoOneRefreshPerInterval) {
  subscribe(1, "T/>", kIntervalMs);
  read_available();
  ASSERT_EQ(got.size(), static_cast<size_t>(kChannels));
  for (auto& [id, c] : got) EXPECT_EQ(c.images, 1u);  // the stream starts with its image at once

  const uint64_t before_hold = monotonic_ns();
  publish_rounds(50);
  read_available();
  for (auto& [id, c] : got) EXPECT_EQ(c.updates + c.images, 1u) << "nothing is queued before the interval ends";
  EXPECT_EQ(session->conflation_pending(), static_cast<size_t>(kChannels));

  tick(before_hold + (kIntervalMs - 1) * kMs);  // earlier than any due time
  read_available();
  for (auto& [id, c] : got) EXPECT_EQ(c.images, 1u);

  tick(monotonic_ns() + kIntervalMs * kMs);
  read_available();
  for (auto& [id, c] : got) {
    EXPECT_EQ(c.images, 2u);  // one merged refresh
    EXPECT_EQ(c.updates, 0u);
    EXPECT_EQ(c.seq, 51u);    // initial publish + 50 rounds: the seq says what it covers
    EXPECT_EQ(c.value, round);
  }
  EXPECT_EQ(session->conflation_pending(), 0u);
  EXPECT_EQ(session->conflation_refreshes(), static_cast<uint64_t>(kChannels));

  tick(monotonic_ns() + 10 * kIntervalMs * kMs);  // nothing held: nothing sent
  read_available();
  for (auto& [id, c] : got) EXPECT_EQ(c.images, 2u);
}

TEST_F(SessionConflationTest, ARealTimeSubscriberOfTheSameChannelsGetsEveryUpdate) {
  subscribe(1, "T/>", kIntervalMs);
  subscribe(2, "T/3", 0);  // real time wins for T/3
  read_available();
  publish_rounds(20);
  read_available();
  const uint32_t t3 = ids[3];
  EXPECT_EQ(got[t3].updates, 20u);
  EXPECT_EQ(got[t3].value, round);
  tick(monotonic_ns() + kIntervalMs * kMs);
  read_available();
  EXPECT_EQ(got[t3].images, 1u);
  EXPECT_EQ(got[ids[0]].images, 2u);
  EXPECT_EQ(got[ids[0]].value, round);
}

TEST_F(SessionConflationTest, HeldUpdatesGoOutInOrderWhenTheChannelBecomesRealTime) {
  subscribe(1, "T/>", kIntervalMs);
  publish_rounds(5);
  subscribe(2, "T/0", 0);
  publish_rounds(3);
  read_available();
  const Received& c = got[ids[0]];
  EXPECT_EQ(c.images, 2u);   // initial, then the refresh that released the held updates
  EXPECT_EQ(c.updates, 2u);  // and real time after it, in order (checked in apply)
  EXPECT_EQ(c.value, round);
}

TEST_F(SessionConflationTest, UnsubscribingForgetsHeldChannels) {
  subscribe(1, "T/>", kIntervalMs);
  publish_rounds(3);
  send(frame_of(wire::Subscribe{2, "T/>"}, wire::MsgType::Unsubscribe));
  turn();
  read_available();
  tick(monotonic_ns() + kIntervalMs * kMs);
  read_available();
  for (auto& [id, c] : got) EXPECT_EQ(c.images, 1u);
  EXPECT_EQ(session->conflation_pending(), 0u);
  EXPECT_EQ(session->conflation_refreshes(), 0u);
}

}  // namespace
}  // namespace tw::broker
