// BIND's and UNBIND's version-5 flags (docs/protocol.md, "Guaranteed
// messaging"): durable topic subscription, replay from a seq or a time, unsubscribe.
#include <gtest/gtest.h>

#include "tickwire/wire/guaranteed.h"
#include "wire_test_support.h"

namespace tw::wire {
namespace {

using wiretest::Bytes;
using wiretest::encoded;

Frame frame_of(const Bytes& bytes) {
  Frame f;
  EXPECT_EQ(split_frame(bytes, kDefaultMaxFrame, f), SplitResult::Frame);
  return f;
}

Bytes bind_frame(const Bind& m) {
  Bytes out = encoded([&](std::span<uint8_t> o) { return encode(o, m); });
  EXPECT_EQ(out.size(), bind_size(m));
  return out;
}

TEST(BindFlags, DurableSubscriptionAndReplayRoundTrip) {
  const Bind sent{5, 100, "my-fills", "FILL/>", ReplayFrom::Time, 1'765'000'000'000'000'000ull};
  const Bytes bytes = bind_frame(sent);
  const Frame f = frame_of(bytes);
  EXPECT_EQ(f.flags, kBindDurable | kBindFromTime);
  Bind got;
  ASSERT_TRUE(decode(f, got));
  EXPECT_EQ(got.bind_id, 5u);
  EXPECT_EQ(got.window, 100u);
  EXPECT_EQ(got.queue, "my-fills");
  EXPECT_EQ(got.topic, "FILL/>");
  EXPECT_EQ(got.replay, ReplayFrom::Time);
  EXPECT_EQ(got.from, sent.from);
}

TEST(BindFlags, AVersion4BindHasNoFlagsAndNoTail) {
  const Bytes bytes = bind_frame(Bind{5, 100, "orders"});
  EXPECT_EQ(bytes.size(), kHeaderSize + 4 + 4 + 2 + 6);
  const Frame f = frame_of(bytes);
  EXPECT_EQ(f.flags, 0);
  Bind got;
  ASSERT_TRUE(decode(f, got));
  EXPECT_TRUE(got.topic.empty());
  EXPECT_EQ(got.replay, ReplayFrom::None);
}

TEST(BindFlags, ReplayFromSeqCarriesOnlyTheSeq) {
  const Bytes bytes = bind_frame(Bind{1, 0, "orders", {}, ReplayFrom::Seq, 42});  // the frame views it
  const Frame f = frame_of(bytes);
  EXPECT_EQ(f.flags, kBindFromSeq);
  Bind got;
  ASSERT_TRUE(decode(f, got));
  EXPECT_EQ(got.replay, ReplayFrom::Seq);
  EXPECT_EQ(got.from, 42u);
}

TEST(BindFlags, MalformedCombinationsAreRefused) {
  Bytes both = bind_frame(Bind{1, 0, "orders", {}, ReplayFrom::Seq, 42});
  both[5] = kBindFromSeq | kBindFromTime;  // the flags byte
  Bind got;
  EXPECT_FALSE(decode(frame_of(both), got)) << "seq and time at once";

  Bytes unknown = bind_frame(Bind{1, 0, "orders"});
  unknown[5] = 0x08;
  EXPECT_FALSE(decode(frame_of(unknown), got)) << "an undefined flag";

  Bytes no_tail = bind_frame(Bind{1, 0, "orders"});
  no_tail[5] = kBindFromSeq;  // says a seq follows; none does
  EXPECT_FALSE(decode(frame_of(no_tail), got));

  Bytes empty_topic = encoded([](std::span<uint8_t> o) { return encode(o, Bind{1, 0, "s", {}, ReplayFrom::None, 0}); });
  empty_topic.push_back(0);  // str16 "" for the topic
  empty_topic.push_back(0);
  empty_topic[0] = static_cast<uint8_t>(empty_topic.size());
  empty_topic[5] = kBindDurable;
  EXPECT_FALSE(decode(frame_of(empty_topic), got)) << "a durable subscription needs a topic";
}

TEST(BindFlags, UnbindUnsubscribeRoundTrips) {
  const Bytes bytes = encoded([](std::span<uint8_t> o) { return encode(o, Unbind{7, true}); });
  const Frame f = frame_of(bytes);
  EXPECT_EQ(f.flags, kUnbindUnsubscribe);
  Unbind got;
  ASSERT_TRUE(decode(f, got));
  EXPECT_EQ(got.bind_id, 7u);
  EXPECT_TRUE(got.unsubscribe);
  Bytes bad = bytes;
  bad[5] = 0x02;
  EXPECT_FALSE(decode(frame_of(bad), got));
}

}  // namespace
}  // namespace tw::wire
