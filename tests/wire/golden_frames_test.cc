// Byte-exact example frames. docs/protocol.md quotes these dumps; if one of
// these tests fails, the wire format changed and the document must change too.
// Payload used below: a field list {BID(22) = DECIMAL 123.45}
//   01 00 | 16 00 02 | 39 30 00 00 00 00 00 00 | fe
//   count   id  type    mantissa 12345           exponent -2
#include <gtest/gtest.h>

#include "wire_test_support.h"

namespace tw::wiretest {
namespace {

using namespace tw::wire;

constexpr const char* kPayloadHex = "01 00 16 00 02 39 30 00 00 00 00 00 00 fe";

// Both directions: the encoder produced exactly `golden`, and those bytes
// decode back to the message. The result views into `frame`, which the caller keeps.
template <typename Msg>
Msg expect_golden(const Bytes& frame, std::string_view golden) {
  EXPECT_EQ(hex(frame), hex(from_hex(golden)));
  Msg m;
  EXPECT_TRUE(decode(split_one(frame), m));
  return m;
}

TEST(GoldenFrames, Hello) {
  Bytes f = encoded([](auto o) { return encode(o, Hello{1, 1, 5000, "cli"}); });
  auto m = expect_golden<Hello>(f,
                                "15 00 00 00 01 00 00 00"  // length 21, HELLO, flags 0, reserved 0
                                "01 00 01 00"              // min_version 1, max_version 1
                                "88 13 00 00"              // heartbeat_ms 5000
                                "03 00 63 6c 69");         // client_name "cli"
  EXPECT_EQ(m.heartbeat_ms, 5000u);
  EXPECT_EQ(m.client_name, "cli");
}

TEST(GoldenFrames, HelloWithCredentials) {
  Hello hello{1, 2, 5000, "cli"};
  hello.credentials = true;
  hello.user = "alice";
  hello.password = "pw";
  Bytes f = encoded([&](auto o) { return encode(o, hello); });
  auto m = expect_golden<Hello>(f,
                                "20 00 00 00 01 01 00 00"  // length 32, HELLO, flags 1 (credentials)
                                "01 00 02 00"              // min_version 1, max_version 2
                                "88 13 00 00"              // heartbeat_ms 5000
                                "03 00 63 6c 69"           // client_name "cli"
                                "05 00 61 6c 69 63 65"     // user "alice"
                                "02 00 70 77");            // password "pw"
  EXPECT_TRUE(m.credentials);
  EXPECT_EQ(m.user, "alice");
  EXPECT_EQ(m.password, "pw");
}

TEST(GoldenFrames, HelloCredentialsNeedVersion2) {
  // The credentials flag with max_version 1, and an unknown flag bit, are malformed.
  for (const char* golden : {"20 00 00 00 01 01 00 00 01 00 01 00 88 13 00 00 03 00 63 6c 69 05 00 61 6c 69 63 65 02 00 70 77",
                             "15 00 00 00 01 02 00 00 01 00 02 00 88 13 00 00 03 00 63 6c 69",
                             "1c 00 00 00 01 01 00 00 01 00 02 00 88 13 00 00 03 00 63 6c 69 05 00 61 6c 69 63 65"}) {
    Hello m;
    EXPECT_FALSE(decode(split_one(from_hex(golden)), m)) << golden;
  }
}

TEST(GoldenFrames, Reload) {
  Bytes f = encoded([](auto o) { return encode(o, ReloadMsg{7}); });
  auto m = expect_golden<ReloadMsg>(f,
                                    "0c 00 00 00 0c 00 00 00"  // length 12, RELOAD
                                    "07 00 00 00");            // request_id 7
  EXPECT_EQ(m.request_id, 7u);
}

TEST(GoldenFrames, Welcome) {
  Bytes f = encoded([](auto o) { return encode(o, Welcome{1, 5000, 1u << 20, 1000, "tickwired"}); });
  auto m = expect_golden<Welcome>(f,
                                  "21 00 00 00 81 00 00 00"  // length 33, WELCOME
                                  "01 00"                    // version 1
                                  "88 13 00 00"              // heartbeat_ms 5000
                                  "00 00 10 00"              // max_frame 1048576
                                  "e8 03 00 00"              // max_subscriptions 1000
                                  "09 00 74 69 63 6b 77 69 72 65 64");  // "tickwired"
  EXPECT_EQ(m.max_frame, 1u << 20);
}

TEST(GoldenFrames, WelcomeVersionThreeAddsTheLimits) {
  Welcome w{3, 5000, 1u << 20, 1000, "tickwired"};
  w.limits = {100'000, 1'000'000, 100'000, 256, 16, 15'000};
  Bytes f = encoded([&](auto o) { return encode(o, w); });
  auto m = expect_golden<Welcome>(f,
                                  "39 00 00 00 81 00 00 00"  // length 57, WELCOME
                                  "03 00"                    // version 3
                                  "88 13 00 00"              // heartbeat_ms 5000
                                  "00 00 10 00"              // max_frame 1048576
                                  "e8 03 00 00"              // max_subscriptions 1000
                                  "09 00 74 69 63 6b 77 69 72 65 64"  // "tickwired"
                                  "a0 86 01 00"              // max_registrations 100000
                                  "40 42 0f 00"              // max_channels 1000000
                                  "a0 86 01 00"              // max_channels_per_connection 100000
                                  "00 01 00 00"              // max_topic_length 256
                                  "10 00 00 00"              // max_topic_depth 16
                                  "98 3a 00 00");            // idle_timeout_ms 15000
  EXPECT_EQ(m.limits.max_topic_depth, 16u);
  EXPECT_EQ(m.limits.idle_timeout_ms, 15'000u);
}

// The version field decides the layout: a version-2 WELCOME with the limits
// appended has trailing bytes, a version-3 one without them is truncated.
TEST(GoldenFrames, WelcomeLayoutFollowsItsVersion) {
  Welcome w{3, 5000, 1u << 20, 1000, "t"};
  Bytes v3 = encoded([&](auto o) { return encode(o, w); });
  w.version = 2;
  Bytes v2 = encoded([&](auto o) { return encode(o, w); });
  ASSERT_EQ(v3.size(), v2.size() + kWelcomeLimitsSize);
  v3[8] = 2;  // version 2 with the limits appended
  Welcome out;
  EXPECT_FALSE(decode(split_one(v3), out));
  v2[8] = 3;  // version 3 without them
  EXPECT_FALSE(decode(split_one(v2), out));
}

TEST(GoldenFrames, Subscribe) {
  Bytes f = encoded([](auto o) { return encode(o, MsgType::Subscribe, Subscribe{1, "DEMO/>"}); });
  auto m = expect_golden<Subscribe>(f,
                                    "14 00 00 00 02 00 00 00"  // length 20, SUBSCRIBE
                                    "01 00 00 00"              // request_id 1
                                    "06 00 44 45 4d 4f 2f 3e");  // pattern "DEMO/>"
  EXPECT_EQ(m.pattern, "DEMO/>");
}

TEST(GoldenFrames, SubscribeWithAConflationInterval) {
  Bytes f = encoded(
      [](auto o) { return encode(o, MsgType::Subscribe, Subscribe{1, "DEMO/>", SlowPolicy::Drop, 200}); });
  auto m = expect_golden<Subscribe>(f,
                                    "18 00 00 00 02 06 00 00"  // length 24, SUBSCRIBE, flags drop | conflate
                                    "01 00 00 00"              // request_id 1
                                    "06 00 44 45 4d 4f 2f 3e"  // pattern "DEMO/>"
                                    "c8 00 00 00");            // conflate_ms 200
  EXPECT_EQ(m.policy, SlowPolicy::Drop);
  EXPECT_EQ(m.conflate_ms, 200u);
}

TEST(GoldenFrames, Ack) {
  Bytes f = encoded([](auto o) { return encode(o, Ack{1, Code::Ok, ""}); });
  expect_golden<Ack>(f,
                     "10 00 00 00 82 00 00 00"  // length 16, ACK
                     "01 00 00 00"              // request_id 1
                     "00 00"                    // code OK
                     "00 00");                  // text ""
}

TEST(GoldenFrames, Register) {
  Bytes f = encoded([](auto o) { return encode(o, Register{7, PayloadKind::FieldList, "DEMO/IBM"}); });
  auto m = expect_golden<Register>(f,
                                   "17 00 00 00 05 00 00 00"  // length 23, REGISTER
                                   "07 00 00 00"              // publish_id 7
                                   "00"                       // kind FIELD_LIST
                                   "08 00 44 45 4d 4f 2f 49 42 4d");  // topic "DEMO/IBM"
  EXPECT_EQ(m.publish_id, 7u);
}

TEST(GoldenFrames, Publish) {
  Bytes payload = from_hex(kPayloadHex);
  Bytes f = encoded([&](auto o) { return encode(o, Publish{7, false, payload}); });
  auto m = expect_golden<Publish>(f, std::string("1a 00 00 00 06 00 00 00"  // length 26, PUBLISH, flags 0
                                                 "07 00 00 00") +           // publish_id 7
                                         kPayloadHex);
  EXPECT_FALSE(m.image);
}

TEST(GoldenFrames, PublishImage) {
  Bytes payload = from_hex(kPayloadHex);
  Bytes f = encoded([&](auto o) { return encode(o, Publish{7, true, payload}); });
  auto m = expect_golden<Publish>(f, std::string("1a 00 00 00 06 01 00 00"  // flags 0x01 = IMAGE
                                                 "07 00 00 00") +
                                         kPayloadHex);
  EXPECT_TRUE(m.image);
}

TEST(GoldenFrames, Channel) {
  Bytes f = encoded([](auto o) { return encode(o, ChannelIntro{3, PayloadKind::FieldList, "DEMO/IBM"}); });
  expect_golden<ChannelIntro>(f,
                              "17 00 00 00 83 00 00 00"  // length 23, CHANNEL
                              "03 00 00 00"              // channel_id 3
                              "00"                       // kind FIELD_LIST
                              "08 00 44 45 4d 4f 2f 49 42 4d");
}

TEST(GoldenFrames, Image) {
  Bytes payload = from_hex(kPayloadHex);
  Bytes f = encoded([&](auto o) { return encode(o, Image{3, 41, 1, payload}); });
  auto m = expect_golden<Image>(f, std::string("26 00 00 00 84 00 00 00"  // length 38, IMAGE
                                               "03 00 00 00"              // channel_id 3
                                               "29 00 00 00 00 00 00 00"  // seq 41
                                               "01 00 00 00") +           // request_id 1
                                       kPayloadHex);
  EXPECT_EQ(m.seq, 41u);
}

TEST(GoldenFrames, Update) {
  Bytes payload = from_hex(kPayloadHex);
  Bytes f = encoded([&](auto o) { return encode(o, Update{3, 42, payload}); });
  auto m = expect_golden<Update>(f, std::string("22 00 00 00 85 00 00 00"  // length 34, UPDATE
                                                "03 00 00 00"              // channel_id 3
                                                "2a 00 00 00 00 00 00 00") +  // seq 42
                                        kPayloadHex);
  EXPECT_EQ(m.seq, 42u);
}

TEST(GoldenFrames, Status) {
  Bytes f = encoded([](auto o) { return encode(o, StatusMsg{3, ChannelState::Stale, Code::Ok, ""}); });
  expect_golden<StatusMsg>(f,
                           "11 00 00 00 86 00 00 00"  // length 17, STATUS
                           "03 00 00 00"              // channel_id 3
                           "01"                       // state STALE
                           "00 00"                    // code OK
                           "00 00");                  // text ""
}

TEST(GoldenFrames, Error) {
  Bytes f = encoded([](auto o) { return encode(o, ErrorMsg{Code::HelloExpected, "hello first"}); });
  expect_golden<ErrorMsg>(f,
                          "17 00 00 00 87 00 00 00"  // length 23, ERROR
                          "05 00"                    // code HELLO_EXPECTED
                          "0b 00 68 65 6c 6c 6f 20 66 69 72 73 74");  // "hello first"
}

TEST(GoldenFrames, Heartbeat) {
  Bytes f = encoded([](auto o) { return encode_heartbeat(o); });
  EXPECT_EQ(hex(f), "08 00 00 00 07 00 00 00");
}

}  // namespace
}  // namespace tw::wiretest
