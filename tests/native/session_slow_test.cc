// NativeSession's slow-consumer policies, in process: a real session on one
// end of a socketpair whose other end the test reads only when it chooses,
// the real router and fanout, and turns driven by hand (flush_all = end of turn).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

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

constexpr size_t kBound = 16 * 1024;
constexpr int kChannels = 20;

std::vector<uint8_t> quote(int64_t value) { return tw::testing::field_list({{22, value}}); }

std::vector<uint8_t> hello_frame() {
  std::vector<uint8_t> buf(256);
  buf.resize(wire::encode(buf, wire::Hello{1, 1, 0, "slow"}));
  return buf;
}

std::vector<uint8_t> subscribe_frame(uint32_t request_id, std::string_view pattern, wire::SlowPolicy policy) {
  std::vector<uint8_t> buf(256);
  buf.resize(wire::encode(buf, wire::MsgType::Subscribe, wire::Subscribe{request_id, pattern, policy}));
  return buf;
}

// What the peer read: per channel, the stream as it arrived, with the rules checked.
struct PeerView {
  struct Chan {
    uint64_t seq = 0;
    int64_t value = 0;     // field 22 of the last image/update
    uint64_t refreshes = 0;
    uint64_t notices = 0;
    uint64_t announced = 0;  // dropped count of the last notice, not yet consumed by a jump
  };
  std::map<uint32_t, Chan> chans;
  std::vector<std::string> errors;
  bool error_frame = false;

  void apply(const wire::Frame& f) {
    if (f.type == wire::MsgType::Image) {
      wire::Image m;
      ASSERT_TRUE(wire::decode(f, m));
      Chan& c = chans[m.channel_id];
      if (c.seq != 0 && m.seq != c.seq + 1) ++c.refreshes;
      c.seq = m.seq;
      c.value = value_of(m.payload);
    } else if (f.type == wire::MsgType::Update) {
      wire::Update m;
      ASSERT_TRUE(wire::decode(f, m));
      Chan& c = chans[m.channel_id];
      if (c.seq == 0) errors.push_back("update before image");
      if (m.seq != c.seq + 1 + c.announced) errors.push_back("unannounced gap on " + std::to_string(m.channel_id));
      c.announced = 0;
      c.seq = m.seq;
      c.value = value_of(m.payload);
    } else if (f.type == wire::MsgType::Status) {
      wire::StatusMsg m;
      ASSERT_TRUE(wire::decode(f, m));
      ASSERT_EQ(m.code, wire::Code::MessagesDropped);
      Chan& c = chans[m.channel_id];
      ++c.notices;
      c.announced = std::stoull(std::string(m.text));
      if (std::string(m.text).find(" messages dropped") == std::string::npos) errors.push_back("notice text");
    } else if (f.type == wire::MsgType::Error) {
      error_frame = true;
    }
  }
  static int64_t value_of(std::span<const uint8_t> payload) {
    fields::FieldImage image;
    EXPECT_TRUE(image.merge(payload));
    for (const auto& field : image.fields()) {
      if (field.id == 22) return field.i;
    }
    return -1;
  }
};

class SessionSlowTest : public ::testing::Test, protected testing::SessionHarness {
 protected:
  void start(const std::string& default_policy, wire::SlowPolicy subscribe_policy) {
    config.limits.max_output_buffer = kBound;
    config.slow_consumer_policy = default_policy;
    RouterLimits limits;
    limits.default_policy = default_policy == "drop"         ? SlowPolicy::Drop
                            : default_policy == "disconnect" ? SlowPolicy::Disconnect
                                                             : SlowPolicy::Conflate;
    open(limits, 0, 4096);
    for (int i = 0; i < kChannels; ++i) {
      cache::ChannelId id = 0;
      ASSERT_TRUE(router->advertise("T/" + std::to_string(i), wire::PayloadKind::FieldList, id).ok());
      ids.push_back(id);
      ASSERT_TRUE(router->publish(id, quote(0), false).ok());
    }
    send(hello_frame());
    send(subscribe_frame(1, "T/>", subscribe_policy));
    turn();
    read_available();
    ASSERT_EQ(view.chans.size(), static_cast<size_t>(kChannels));
  }
  // One publish round over every channel, then the end of the turn.
  void publish_round() {
    ++round;
    for (cache::ChannelId id : ids) ASSERT_TRUE(router->publish(id, quote(round), false).ok());
    turn();
  }
  size_t read_available() {
    size_t total = 0;
    uint8_t buf[65536];
    for (;;) {
      ssize_t n = ::read(peer, buf, sizeof buf);
      if (n <= 0) break;
      in.insert(in.end(), buf, buf + n);
      total += static_cast<size_t>(n);
    }
    size_t pos = 0;
    wire::Frame f;
    while (wire::split_frame({in.data() + pos, in.size() - pos}, 1u << 20, f) == wire::SplitResult::Frame) {
      view.apply(f);
      pos += f.size;
    }
    in.erase(in.begin(), in.begin() + static_cast<long>(pos));
    return total;
  }
  // The peer reads everything while the session writes (EPOLLOUT) until both are idle.
  void drain() {
    for (int i = 0; i < 10'000; ++i) {
      size_t got = read_available();
      session->on_io(EPOLLOUT);
      if (got == 0 && session->queued_output() == 0 && session->lagging_channels() == 0 &&
          read_available() == 0) {
        return;
      }
    }
    FAIL() << "the session never drained";
  }
  void stall_until_congested() {
    for (int i = 0; i < 500 && session->lagging_channels() == 0 && !session->closing(); ++i) publish_round();
  }

  std::vector<cache::ChannelId> ids;
  int64_t round = 0;
  std::vector<uint8_t> in;
  PeerView view;
};

TEST_F(SessionSlowTest, ConflateBoundsTheQueueAndEndsWithEveryChannelsFinalState) {
  start("conflate", wire::SlowPolicy::Default);
  stall_until_congested();
  ASSERT_GT(session->lagging_channels(), 0u);
  for (int i = 0; i < 200; ++i) {
    publish_round();
    // The bound plus one frame: nothing is queued once it is reached.
    EXPECT_LE(session->queued_output(), kBound + 64);
  }
  EXPECT_FALSE(session->closing());
  EXPECT_GT(session->slow_stats().conflated_channels, 0u);
  drain();
  EXPECT_EQ(session->lagging_channels(), 0u);
  EXPECT_TRUE(view.errors.empty()) << view.errors.front();
  uint64_t refreshes = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto& c = view.chans[ids[i]];
    EXPECT_EQ(c.value, round) << "channel " << ids[i];
    EXPECT_EQ(c.seq, router->channel(ids[i])->seq);
    refreshes += c.refreshes;
  }
  EXPECT_EQ(refreshes, session->slow_stats().refresh_images);
  EXPECT_EQ(counters.refresh_images, session->slow_stats().refresh_images);
  // After resuming, delivery is normal again: every message of the next rounds arrives.
  publish_round();
  publish_round();
  drain();
  for (cache::ChannelId id : ids) EXPECT_EQ(view.chans[id].value, round);
  EXPECT_TRUE(view.errors.empty());
}

TEST_F(SessionSlowTest, DropAnnouncesEachGapBeforeTheNextMessageOfItsChannel) {
  start("conflate", wire::SlowPolicy::Drop);
  stall_until_congested();
  for (int i = 0; i < 50; ++i) publish_round();
  EXPECT_FALSE(session->closing());
  const uint64_t dropped = session->slow_stats().dropped_messages;
  EXPECT_GT(dropped, 0u);
  drain();
  publish_round();  // the message after each announced gap
  drain();
  EXPECT_TRUE(view.errors.empty()) << view.errors.front();
  uint64_t notices = 0;
  for (cache::ChannelId id : ids) {
    EXPECT_EQ(view.chans[id].value, round);
    EXPECT_EQ(view.chans[id].refreshes, 0u);  // drop never refreshes a stream that started
    notices += view.chans[id].notices;
  }
  EXPECT_EQ(notices, session->slow_stats().drop_notices);
  EXPECT_EQ(counters.dropped_messages, dropped);
}

TEST_F(SessionSlowTest, DisconnectClosesTheSessionAsSlowConsumer) {
  start("disconnect", wire::SlowPolicy::Default);
  stall_until_congested();
  EXPECT_TRUE(session->closing());
  EXPECT_TRUE(session->slow_stats().disconnected);
  EXPECT_EQ(counters.slow_consumers, 1u);
  EXPECT_EQ(session->lagging_channels(), 0u);
}

TEST_F(SessionSlowTest, ADisconnectSubscriptionAmongConflatedOnesStillDisconnects) {
  start("conflate", wire::SlowPolicy::Default);
  send(subscribe_frame(2, "T/0", wire::SlowPolicy::Disconnect));
  turn();
  stall_until_congested();
  for (int i = 0; i < 10 && !session->closing(); ++i) publish_round();
  EXPECT_TRUE(session->closing());
  EXPECT_TRUE(session->slow_stats().disconnected);
}

}  // namespace
}  // namespace tw::broker
