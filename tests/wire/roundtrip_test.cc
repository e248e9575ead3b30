// Encode -> split -> decode gives back every field of every message type, and
// decode -> encode gives back the same bytes.
#include <gtest/gtest.h>

#include "reencode.h"
#include "wire_test_support.h"

namespace tw::wiretest {
namespace {

using namespace tw::wire;

// A decoded message views into its frame, so the two travel together.
template <typename Msg>
struct Decoded {
  Bytes frame;
  Msg msg;
};

template <typename Msg, typename EncodeFn>
Decoded<Msg> roundtrip(EncodeFn encode_fn) {
  Decoded<Msg> out{encoded(encode_fn), {}};
  EXPECT_GT(out.frame.size(), 0u);
  EXPECT_TRUE(decode(split_one(out.frame), out.msg));
  return out;
}

Bytes as_bytes(std::span<const uint8_t> s) { return Bytes(s.begin(), s.end()); }

TEST(WireRoundTrip, Hello) {
  auto [frame, m] = roundtrip<Hello>([](auto o) { return encode(o, Hello{1, 3, 5000, "cli"}); });
  EXPECT_EQ(m.min_version, 1);
  EXPECT_EQ(m.max_version, 3);
  EXPECT_EQ(m.heartbeat_ms, 5000u);
  EXPECT_EQ(m.client_name, "cli");
}

TEST(WireRoundTrip, Welcome) {
  auto [frame, m] = roundtrip<Welcome>([](auto o) { return encode(o, Welcome{1, 2500, 65536, 77, "edge-1"}); });
  EXPECT_EQ(m.version, 1);
  EXPECT_EQ(m.heartbeat_ms, 2500u);
  EXPECT_EQ(m.max_frame, 65536u);
  EXPECT_EQ(m.max_subscriptions, 77u);
  EXPECT_EQ(m.server_name, "edge-1");
}

TEST(WireRoundTrip, SubscribeAndUnsubscribeKeepTheirType) {
  for (MsgType type : {MsgType::Subscribe, MsgType::Unsubscribe}) {
    Bytes frame = encoded([&](auto o) { return encode(o, type, Subscribe{0xDEADBEEF, "NYSE/*/>"}); });
    Frame f = split_one(frame);
    EXPECT_EQ(f.type, type);
    Subscribe m;
    ASSERT_TRUE(decode(f, m));
    EXPECT_EQ(m.request_id, 0xDEADBEEFu);
    EXPECT_EQ(m.pattern, "NYSE/*/>");
  }
}

TEST(WireRoundTrip, Snapshot) {
  auto [frame, m] = roundtrip<Snapshot>([](auto o) { return encode(o, Snapshot{9, "LSE/EQ/VOD"}); });
  EXPECT_EQ(m.request_id, 9u);
  EXPECT_EQ(m.topic, "LSE/EQ/VOD");
}

TEST(WireRoundTrip, RegisterBothKinds) {
  for (PayloadKind kind : {PayloadKind::FieldList, PayloadKind::Opaque}) {
    auto [frame, m] = roundtrip<Register>([&](auto o) { return encode(o, Register{4, kind, "FX/EURUSD"}); });
    EXPECT_EQ(m.publish_id, 4u);
    EXPECT_EQ(m.kind, kind);
    EXPECT_EQ(m.topic, "FX/EURUSD");
  }
}

TEST(WireRoundTrip, SubscribeCarriesItsSlowConsumerPolicyInTheFlags) {
  for (SlowPolicy policy : {SlowPolicy::Default, SlowPolicy::Conflate, SlowPolicy::Drop, SlowPolicy::Disconnect}) {
    Bytes frame = encoded([&](auto o) { return encode(o, MsgType::Subscribe, Subscribe{5, "A/*", policy}); });
    Frame f = split_one(frame);
    EXPECT_EQ(f.flags, static_cast<uint8_t>(policy));
    Subscribe m;
    ASSERT_TRUE(decode(f, m));
    EXPECT_EQ(m.policy, policy);
    EXPECT_EQ(m.pattern, "A/*");
    Bytes again(frame.size());
    ASSERT_EQ(reencode(f, again), frame.size());
    EXPECT_EQ(hex(again), hex(frame));
  }
}

TEST(WireRoundTrip, SubscribeCarriesItsConflationIntervalAfterThePattern) {
  for (uint32_t ms : {0u, 1u, 200u, 0xFFFFFFFFu}) {
    Bytes frame = encoded(
        [&](auto o) { return encode(o, MsgType::Subscribe, Subscribe{5, "A/*", SlowPolicy::Conflate, ms}); });
    Frame f = split_one(frame);
    EXPECT_EQ((f.flags & kSubscribeConflate) != 0, ms != 0);
    EXPECT_EQ(f.body.size(), 4u + 2u + 3u + (ms != 0 ? 4u : 0u));
    Subscribe m;
    ASSERT_TRUE(decode(f, m));
    EXPECT_EQ(m.conflate_ms, ms);
    EXPECT_EQ(m.policy, SlowPolicy::Conflate);
    EXPECT_EQ(m.pattern, "A/*");
    Bytes again(frame.size());
    ASSERT_EQ(reencode(f, again), frame.size());
    EXPECT_EQ(hex(again), hex(frame));
  }
}

TEST(WireRoundTrip, SubscribeCarriesItsDelayAfterTheConflationInterval) {
  for (uint32_t conflate : {0u, 200u}) {
    for (uint32_t delay : {0u, 1u, 900'000u, 0xFFFFFFFFu}) {
      Bytes frame = encoded([&](auto o) {
        return encode(o, MsgType::Subscribe, Subscribe{5, "A/*", SlowPolicy::Drop, conflate, delay});
      });
      Frame f = split_one(frame);
      EXPECT_EQ((f.flags & kSubscribeDelay) != 0, delay != 0);
      EXPECT_EQ(f.body.size(), 4u + 2u + 3u + (conflate != 0 ? 4u : 0u) + (delay != 0 ? 4u : 0u));
      Subscribe m;
      ASSERT_TRUE(decode(f, m));
      EXPECT_EQ(m.delay_ms, delay);
      EXPECT_EQ(m.conflate_ms, conflate);
      EXPECT_EQ(m.policy, SlowPolicy::Drop);
      Bytes again(frame.size());
      ASSERT_EQ(reencode(f, again), frame.size());
      EXPECT_EQ(hex(again), hex(frame));
    }
  }
}

TEST(WireRoundTrip, AZeroDelayOrADelayBitWithoutItsFieldIsMalformed) {
  Bytes frame = encoded([](auto o) { return encode(o, MsgType::Subscribe, Subscribe{5, "A/*", SlowPolicy::Default, 0, 7}); });
  Bytes zero = frame;
  zero[zero.size() - 4] = 0;  // delay_ms 7 -> 0
  Subscribe m;
  EXPECT_FALSE(decode(split_one(zero), m));
  Bytes no_field(frame.begin(), frame.end() - 4);
  no_field[0] = static_cast<uint8_t>(no_field.size());
  EXPECT_FALSE(decode(split_one(no_field), m));
  Bytes unsubscribe = frame;
  unsubscribe[4] = static_cast<uint8_t>(MsgType::Unsubscribe);
  EXPECT_FALSE(decode(split_one(unsubscribe), m));
}

TEST(WireRoundTrip, DelayCapacityHasItsName) {
  EXPECT_STREQ(code_name(Code::DelayCapacity), "DELAY_CAPACITY");
  EXPECT_EQ(static_cast<uint16_t>(Code::DelayCapacity), 23);
}

TEST(WireRoundTrip, UnsubscribeNeverCarriesAConflationInterval) {
  Bytes frame = encoded([](auto o) { return encode(o, MsgType::Unsubscribe, Subscribe{5, "A/*", SlowPolicy::Drop, 9}); });
  Frame f = split_one(frame);
  EXPECT_EQ(f.flags, 0);
  EXPECT_EQ(f.body.size(), 4u + 2u + 3u);
  Subscribe m;
  ASSERT_TRUE(decode(f, m));
  EXPECT_EQ(m.conflate_ms, 0u);
}

TEST(WireRoundTrip, UnsubscribeNeverCarriesAPolicy) {
  Bytes frame = encoded([](auto o) { return encode(o, MsgType::Unsubscribe, Subscribe{5, "A/*", SlowPolicy::Drop}); });
  Frame f = split_one(frame);
  EXPECT_EQ(f.flags, 0);
  Subscribe m;
  ASSERT_TRUE(decode(f, m));
  EXPECT_EQ(m.policy, SlowPolicy::Default);
}

TEST(WireRoundTrip, MessagesDroppedHasItsName) {
  EXPECT_STREQ(code_name(Code::MessagesDropped), "MESSAGES_DROPPED");
  EXPECT_EQ(static_cast<uint16_t>(Code::MessagesDropped), 22);
}

TEST(WireRoundTrip, PublishWithAndWithoutImageFlag) {
  const Bytes payload = sample_payload();
  for (bool image : {false, true}) {
    Bytes frame = encoded([&](auto o) { return encode(o, Publish{5, image, payload}); });
    Frame f = split_one(frame);
    EXPECT_EQ(f.flags, image ? kPublishImage : 0);
    Publish m;
    ASSERT_TRUE(decode(f, m));
    EXPECT_EQ(m.publish_id, 5u);
    EXPECT_EQ(m.image, image);
    EXPECT_EQ(as_bytes(m.payload), payload);
  }
}

TEST(WireRoundTrip, PublishWithEmptyPayload) {
  auto [frame, m] = roundtrip<Publish>([](auto o) { return encode(o, Publish{6, false, {}}); });
  EXPECT_EQ(m.publish_id, 6u);
  EXPECT_TRUE(m.payload.empty());
}

TEST(WireRoundTrip, Ack) {
  auto [frame, m] = roundtrip<Ack>([](auto o) { return encode(o, Ack{21, Code::TooManySubscriptions, "limit 10"}); });
  EXPECT_EQ(m.request_id, 21u);
  EXPECT_EQ(m.code, Code::TooManySubscriptions);
  EXPECT_EQ(m.text, "limit 10");
}

TEST(WireRoundTrip, ChannelIntro) {
  auto [frame, m] = roundtrip<ChannelIntro>(
      [](auto o) { return encode(o, ChannelIntro{0xFFFFFFFF, PayloadKind::Opaque, "NEWS/X"}); });
  EXPECT_EQ(m.channel_id, 0xFFFFFFFFu);
  EXPECT_EQ(m.kind, PayloadKind::Opaque);
  EXPECT_EQ(m.topic, "NEWS/X");
}

TEST(WireRoundTrip, Image) {
  const Bytes payload = sample_payload();
  auto [frame, m] = roundtrip<Image>([&](auto o) { return encode(o, Image{2, 0x0102030405060708ull, 99, payload}); });
  EXPECT_EQ(m.channel_id, 2u);
  EXPECT_EQ(m.seq, 0x0102030405060708ull);
  EXPECT_EQ(m.request_id, 99u);
  EXPECT_EQ(as_bytes(m.payload), payload);
}

TEST(WireRoundTrip, Update) {
  const Bytes payload = sample_payload();
  auto [frame, m] = roundtrip<Update>([&](auto o) { return encode(o, Update{2, ~0ull, payload}); });
  EXPECT_EQ(m.channel_id, 2u);
  EXPECT_EQ(m.seq, ~0ull);
  EXPECT_EQ(as_bytes(m.payload), payload);
}

TEST(WireRoundTrip, StatusEveryState) {
  for (ChannelState state : {ChannelState::Ok, ChannelState::Stale, ChannelState::Closed}) {
    auto [frame, m] = roundtrip<StatusMsg>([&](auto o) { return encode(o, StatusMsg{8, state, Code::NotFound, "why"}); });
    EXPECT_EQ(m.channel_id, 8u);
    EXPECT_EQ(m.state, state);
    EXPECT_EQ(m.code, Code::NotFound);
    EXPECT_EQ(m.text, "why");
  }
}

TEST(WireRoundTrip, Error) {
  auto [frame, m] = roundtrip<ErrorMsg>([](auto o) { return encode(o, ErrorMsg{Code::IdleTimeout, "no heartbeat"}); });
  EXPECT_EQ(m.code, Code::IdleTimeout);
  EXPECT_EQ(m.text, "no heartbeat");
}

TEST(WireRoundTrip, HeartbeatIsAnEmptyFrame) {
  Bytes frame = encoded([](auto o) { return encode_heartbeat(o); });
  Frame f = split_one(frame);
  EXPECT_EQ(f.type, MsgType::Heartbeat);
  EXPECT_TRUE(f.body.empty());
}

TEST(WireRoundTrip, LongestStringStillFits) {
  std::string name(0xFFFF, 'x');
  Bytes scratch(kHeaderSize + 10 + 0xFFFF);
  size_t n = encode(scratch, Hello{1, 1, 0, name});
  ASSERT_EQ(n, scratch.size());
  Frame f = split_one(scratch);
  Hello m;
  ASSERT_TRUE(decode(f, m));
  EXPECT_EQ(m.client_name, name);
}

TEST(WireRoundTrip, EveryMessageTypeDecodesAndReencodesToTheSameBytes) {
  for (const Sample& s : all_samples()) {
    SCOPED_TRACE(s.name);
    Frame f = split_one(s.frame);
    EXPECT_EQ(f.type, s.type);
    Bytes again(s.frame.size());
    ASSERT_EQ(reencode(f, again), s.frame.size());
    EXPECT_EQ(hex(again), hex(s.frame));
  }
}

TEST(WireRoundTrip, SamplesCoverEveryMessageType) {
  std::vector<MsgType> seen;
  for (const Sample& s : all_samples()) seen.push_back(s.type);
  for (MsgType t : {MsgType::Hello, MsgType::Subscribe, MsgType::Unsubscribe, MsgType::Snapshot, MsgType::Register,
                    MsgType::Publish, MsgType::Heartbeat, MsgType::Welcome, MsgType::Ack, MsgType::Channel,
                    MsgType::Image, MsgType::Update, MsgType::Status, MsgType::Error}) {
    EXPECT_NE(std::find(seen.begin(), seen.end(), t), seen.end()) << static_cast<int>(t);
  }
}

TEST(WireEncode, ReturnsZeroAndWritesNothingPastTheBufferWhenTooSmall) {
  constexpr uint8_t kGuard = 0xA5;
  for (const Sample& s : all_samples()) {
    SCOPED_TRACE(s.name);
    Frame f = split_one(s.frame);
    for (size_t cap = 0; cap < s.frame.size(); ++cap) {
      Bytes buf(s.frame.size() + 8, kGuard);
      EXPECT_EQ(reencode(f, std::span<uint8_t>(buf.data(), cap)), 0u) << "capacity " << cap;
      for (size_t i = cap; i < buf.size(); ++i) ASSERT_EQ(buf[i], kGuard) << "wrote byte " << i;
    }
  }
}

TEST(WireEncode, StringLongerThan65535BytesDoesNotEncode) {
  std::string topic(0x10000, 'a');
  Bytes scratch(0x20000);
  EXPECT_EQ(encode(scratch, Snapshot{1, topic}), 0u);
  EXPECT_EQ(encode(scratch, MsgType::Subscribe, Subscribe{1, topic}), 0u);
}

}  // namespace
}  // namespace tw::wiretest
