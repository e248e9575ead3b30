// Everything a decoder or split_frame must refuse: truncated bodies, trailing
// bytes, malformed headers, oversized frames, out-of-range enums and flags.
#include <gtest/gtest.h>

#include "reencode.h"
#include "wire_test_support.h"

namespace tw::wiretest {
namespace {

using namespace tw::wire;

bool decodes(const Bytes& frame) {
  Frame f = split_one(frame);
  Bytes out(frame.size() + 16);
  return reencode(f, out) != 0;
}

Bytes prefix(const Bytes& b, size_t n) { return Bytes(b.begin(), b.begin() + n); }

TEST(WireReject, SamplesHaveTheExpectedFixedBodySize) {
  // Guards the table in wire_test_support.cc that the tests below rely on.
  for (const Sample& s : all_samples()) {
    SCOPED_TRACE(s.name);
    size_t body = s.frame.size() - kHeaderSize;
    if (s.payload_is_rest) {
      EXPECT_LT(s.fixed_body, body);
    } else {
      EXPECT_EQ(s.fixed_body, body);
    }
  }
}

TEST(WireReject, EveryDecoderRejectsEveryTruncatedBody) {
  for (const Sample& s : all_samples()) {
    SCOPED_TRACE(s.name);
    Bytes body = body_of(s.frame);
    for (size_t len = 0; len < s.fixed_body; ++len) {
      EXPECT_FALSE(decodes(with_body(s.frame, prefix(body, len)))) << "body length " << len;
    }
  }
}

TEST(WireReject, PayloadMessagesAcceptAShorterPayload) {
  // PUBLISH/IMAGE/UPDATE carry "the rest of the frame": cutting the payload
  // gives a smaller valid message, which the field-list layer validates.
  for (const Sample& s : all_samples()) {
    if (!s.payload_is_rest) continue;
    SCOPED_TRACE(s.name);
    Bytes body = body_of(s.frame);
    for (size_t len = s.fixed_body; len <= body.size(); ++len) {
      EXPECT_TRUE(decodes(with_body(s.frame, prefix(body, len)))) << "body length " << len;
    }
  }
}

TEST(WireReject, TrailingBytesAfterTheLastFieldAreRejected) {
  for (const Sample& s : all_samples()) {
    if (s.payload_is_rest) continue;
    SCOPED_TRACE(s.name);
    for (size_t extra = 1; extra <= 3; ++extra) {
      Bytes body = body_of(s.frame);
      body.insert(body.end(), extra, 0);
      EXPECT_FALSE(decodes(with_body(s.frame, body))) << extra << " trailing bytes";
    }
  }
}

TEST(WireReject, StringLengthPastTheEndIsRejected) {
  // SUBSCRIBE{1, "AB"} claiming a 3-byte pattern.
  EXPECT_TRUE(decodes(from_hex("10 00 00 00 02 00 00 00 01 00 00 00 02 00 41 42")));
  EXPECT_FALSE(decodes(from_hex("10 00 00 00 02 00 00 00 01 00 00 00 03 00 41 42")));
  EXPECT_FALSE(decodes(from_hex("10 00 00 00 02 00 00 00 01 00 00 00 ff ff 41 42")));
}

TEST(WireReject, LengthBelowHeaderSizeIsMalformed) {
  for (uint8_t length = 0; length < kHeaderSize; ++length) {
    Bytes frame = {length, 0, 0, 0, 0x07, 0, 0, 0, 0, 0, 0, 0};
    Frame f;
    EXPECT_EQ(split_frame(frame, kDefaultMaxFrame, f), SplitResult::Malformed) << int(length);
  }
}

TEST(WireReject, NonZeroReservedIsMalformed) {
  for (Bytes reserved : {Bytes{1, 0}, Bytes{0, 1}, Bytes{0x80, 0}, Bytes{0xff, 0xff}}) {
    Bytes frame = encoded([](auto o) { return encode_heartbeat(o); });
    frame[6] = reserved[0];
    frame[7] = reserved[1];
    Frame f;
    EXPECT_EQ(split_frame(frame, kDefaultMaxFrame, f), SplitResult::Malformed) << hex(frame);
  }
}

TEST(WireReject, HeaderIsJudgedOnlyOnceComplete) {
  // Fewer than 8 bytes: even an impossible length waits for the rest.
  Bytes bad = {3, 0, 0, 0, 0x07, 0, 1};
  Frame f;
  EXPECT_EQ(split_frame(bad, kDefaultMaxFrame, f), SplitResult::NeedMore);
}

TEST(WireReject, FrameOverMaxIsTooLargeAsSoonAsTheHeaderArrives) {
  constexpr uint32_t kMax = 64;
  Bytes header = {kMax + 1, 0, 0, 0, 0x06, 0, 0, 0};  // nothing of the body yet
  Frame f;
  EXPECT_EQ(split_frame(header, kMax, f), SplitResult::TooLarge);
  Bytes huge = {0xff, 0xff, 0xff, 0xff, 0x06, 0, 0, 0};
  EXPECT_EQ(split_frame(huge, kDefaultMaxFrame, f), SplitResult::TooLarge);
}

TEST(WireReject, FrameOfExactlyMaxIsAccepted) {
  constexpr uint32_t kMax = 64;
  Bytes payload(kMax - kPublishFixedSize, 0x5a);
  Bytes frame = encoded([&](auto o) { return encode(o, Publish{1, false, payload}); });
  ASSERT_EQ(frame.size(), kMax);
  Frame f;
  EXPECT_EQ(split_frame(frame, kMax, f), SplitResult::Frame);
  EXPECT_EQ(split_frame(frame, kMax - 1, f), SplitResult::TooLarge);
}

TEST(WireReject, BadPayloadKindInRegisterAndChannel) {
  for (const Sample& s : all_samples()) {
    if (s.type != MsgType::Register && s.type != MsgType::Channel) continue;
    SCOPED_TRACE(s.name);
    constexpr size_t kKindOffset = kHeaderSize + 4;
    for (uint8_t kind : {uint8_t{2}, uint8_t{0x7f}, uint8_t{0xff}}) {
      Bytes frame = s.frame;
      frame[kKindOffset] = kind;
      EXPECT_FALSE(decodes(frame)) << int(kind);
    }
  }
}

TEST(WireReject, BadChannelStateInStatus) {
  Bytes frame = encoded([](auto o) { return encode(o, StatusMsg{1, ChannelState::Closed, Code::Ok, ""}); });
  constexpr size_t kStateOffset = kHeaderSize + 4;
  ASSERT_TRUE(decodes(frame));
  for (uint8_t state : {uint8_t{3}, uint8_t{0xff}}) {
    frame[kStateOffset] = state;
    EXPECT_FALSE(decodes(frame)) << int(state);
  }
}

TEST(WireReject, UnknownPublishFlagsAreRejected) {
  Bytes frame = encoded([](auto o) { return encode(o, Publish{1, false, {}}); });
  constexpr size_t kFlagsOffset = 5;
  for (uint8_t flags : {uint8_t{0x02}, uint8_t{0x03}, uint8_t{0x80}}) {
    frame[kFlagsOffset] = flags;
    Publish m;
    EXPECT_FALSE(decode(split_one(frame), m)) << int(flags);
  }
}

TEST(WireReject, SubscribeFlagsBeyondThePolicyBitsAreRejected) {
  Bytes frame = encoded([](auto o) { return encode(o, MsgType::Subscribe, Subscribe{1, "A/>"}); });
  constexpr size_t kFlagsOffset = 5;
  for (uint8_t flags : {uint8_t{0x04}, uint8_t{0x07}, uint8_t{0x80}}) {
    frame[kFlagsOffset] = flags;
    Subscribe m;
    EXPECT_FALSE(decode(split_one(frame), m)) << int(flags);
  }
}

TEST(WireReject, SubscribeWithAZeroConflationIntervalIsMalformed) {
  EXPECT_TRUE(decodes(from_hex("14 00 00 00 02 04 00 00 01 00 00 00 02 00 41 2f 05 00 00 00")));
  EXPECT_FALSE(decodes(from_hex("14 00 00 00 02 04 00 00 01 00 00 00 02 00 41 2f 00 00 00 00")));
  // The flag without the field, and the field without the flag.
  EXPECT_FALSE(decodes(from_hex("10 00 00 00 02 04 00 00 01 00 00 00 02 00 41 2f")));
  EXPECT_FALSE(decodes(from_hex("14 00 00 00 02 00 00 00 01 00 00 00 02 00 41 2f 05 00 00 00")));
}

TEST(WireReject, UnsubscribeDefinesNoFlags) {
  Bytes frame = encoded([](auto o) { return encode(o, MsgType::Unsubscribe, Subscribe{1, "A/>"}); });
  constexpr size_t kFlagsOffset = 5;
  for (uint8_t flags : {uint8_t{0x01}, uint8_t{0x03}, uint8_t{0x04}}) {
    frame[kFlagsOffset] = flags;
    Subscribe m;
    EXPECT_FALSE(decode(split_one(frame), m)) << int(flags);
  }
}

TEST(WireReject, HeartbeatWithABodyIsNotAHeartbeat) {
  EXPECT_TRUE(decodes(from_hex("08 00 00 00 07 00 00 00")));
  EXPECT_FALSE(decodes(from_hex("09 00 00 00 07 00 00 00 00")));
}

TEST(WireReject, UnknownTypesHaveNoDecoder) {
  for (uint8_t type : {uint8_t{0x00}, uint8_t{0x08}, uint8_t{0x80}, uint8_t{0x88}, uint8_t{0xff}}) {
    Bytes frame = {8, 0, 0, 0, type, 0, 0, 0};
    EXPECT_FALSE(decodes(frame)) << int(type);
  }
}

}  // namespace
}  // namespace tw::wiretest
