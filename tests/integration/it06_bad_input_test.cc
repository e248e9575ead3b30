// Bad input: each offending connection gets an ERROR frame with the right
// code and is closed, while a healthy publisher/subscriber pair on the same
// broker keeps working before and after, and the broker stays up.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "integration/it_support.h"
#include "testlib/fields.h"

namespace tw::it {
namespace {

using testing::field_list;
using wire::Code;
using wire::PayloadKind;

constexpr uint32_t kHealthyId = HealthyPair::kPublishId;
const std::string kHealthyTopic = HealthyPair::kTopic;

// Little-endian header bytes, for the deliberately malformed frames only.
std::vector<uint8_t> raw_header(uint32_t length, uint8_t type, uint8_t flags = 0, uint16_t reserved = 0) {
  std::vector<uint8_t> h(8);
  std::memcpy(h.data(), &length, 4);
  h[4] = type;
  h[5] = flags;
  std::memcpy(h.data() + 6, &reserved, 2);
  return h;
}

class BadInput : public ::testing::Test {
 protected:
  // Each test may start the broker with its own options.
  void start(BrokerOptions options = {}) {
    broker = std::make_unique<BrokerProcess>(std::move(options));
    ASSERT_TRUE(broker->ready()) << broker->err();
    ASSERT_TRUE(healthy.open(broker->port(), "healthy"));
    ASSERT_NO_FATAL_FAILURE(expect_healthy());
  }
  // One more message flows from the healthy publisher to the healthy subscriber, in sequence.
  void expect_healthy() { ASSERT_TRUE(healthy.one_more_arrives(*broker)); }
  // A fresh connection, optionally through the handshake.
  void open_offender(RawClient& c, bool handshake) {
    ASSERT_TRUE(c.connect(broker->port()));
    if (handshake) {
      auto w = c.hello("offender");
      ASSERT_TRUE(w && w->type() == wire::MsgType::Welcome);
    }
  }
  // The offender gets ERROR `code` and is closed; the healthy pair still works.
  void expect_dropped_with(RawClient& c, Code code) {
    auto got = c.wait_closed_with();
    ASSERT_TRUE(got) << "the broker did not close the offending connection";
    EXPECT_EQ(*got, code) << "got " << wire::code_name(*got) << ", expected " << wire::code_name(code);
    ASSERT_NO_FATAL_FAILURE(expect_healthy());
  }
  void bad_frame_test(bool handshake, const std::vector<uint8_t>& bytes, Code code, BrokerOptions options = {}) {
    ASSERT_NO_FATAL_FAILURE(start(std::move(options)));
    RawClient c;
    ASSERT_NO_FATAL_FAILURE(open_offender(c, handshake));
    ASSERT_TRUE(c.send_raw(bytes));
    ASSERT_NO_FATAL_FAILURE(expect_dropped_with(c, code));
  }

  std::unique_ptr<BrokerProcess> broker;
  HealthyPair healthy;
  RawClient& pub = healthy.pub;
  RawClient& sub = healthy.sub;
  StreamModel& model = healthy.model;
};

TEST_F(BadInput, LengthBelowHeaderSizeIsMalformed) {
  bad_frame_test(true, raw_header(3, 0x07), Code::MalformedFrame);
}

TEST_F(BadInput, ReservedBitsSetIsMalformed) {
  bad_frame_test(true, raw_header(8, 0x07, 0, 0x1234), Code::MalformedFrame);
}

TEST_F(BadInput, FrameOverMaxFrameIsTooLarge) {
  auto bytes = raw_header(10'000, static_cast<uint8_t>(wire::MsgType::Publish));
  bytes.resize(2'000, 0);  // the header alone must be enough to refuse it
  bad_frame_test(true, bytes, Code::FrameTooLarge, {.args = {"--max-frame", "4096"}});
}

TEST_F(BadInput, UnknownTypeIsRefused) {
  bad_frame_test(true, raw_header(8, 0x7F), Code::UnknownType);
}

TEST_F(BadInput, BrokerOnlyTypeFromAClientIsRefused) {
  wire::Ack ack{1, Code::Ok, ""};
  std::vector<uint8_t> bytes(64);
  bytes.resize(wire::encode(bytes, ack));
  bad_frame_test(true, bytes, Code::UnknownType);
}

TEST_F(BadInput, FrameBeforeHelloIsRefused) {
  std::vector<uint8_t> bytes(64);
  bytes.resize(wire::encode(bytes, wire::MsgType::Subscribe, wire::Subscribe{1, "HEALTHY/>"}));
  bad_frame_test(false, bytes, Code::HelloExpected);
}

TEST_F(BadInput, RegisterWithInvalidTopicIsRefused) {
  std::vector<uint8_t> bytes(64);
  bytes.resize(wire::encode(bytes, wire::Register{1, PayloadKind::FieldList, "A/*"}));
  bad_frame_test(true, bytes, Code::InvalidTopic);
}

TEST_F(BadInput, RegisterWithOtherKindIsAMismatch) {
  std::vector<uint8_t> bytes(64);
  bytes.resize(wire::encode(bytes, wire::Register{1, PayloadKind::Opaque, kHealthyTopic}));
  bad_frame_test(true, bytes, Code::KindMismatch);
}

TEST_F(BadInput, PublishWithUnknownIdIsRefused) {
  auto payload = field_list({{1, int64_t{1}}});
  std::vector<uint8_t> bytes(64);
  bytes.resize(wire::encode(bytes, wire::Publish{5, false, payload}));
  bad_frame_test(true, bytes, Code::UnknownPublishId);
}

TEST_F(BadInput, MalformedFieldListIsRefusedAndTheCacheUnchanged) {
  ASSERT_NO_FATAL_FAILURE(start());
  RawClient c;
  ASSERT_NO_FATAL_FAILURE(open_offender(c, true));
  ASSERT_TRUE(c.register_topic(9, PayloadKind::FieldList, kHealthyTopic));  // shares the healthy channel
  const std::vector<uint8_t> count_without_entries = {0x05, 0x00};
  ASSERT_TRUE(c.publish(9, count_without_entries));
  ASSERT_NO_FATAL_FAILURE(expect_dropped_with(c, Code::BadPayload));
  // The seq chain of the shared channel was not broken (checked by the model),
  // and a new subscriber sees the last good image.
  RawClient late;
  StreamModel late_model;
  std::string why;
  ASSERT_TRUE(open_client(late, broker->port(), "late", &why)) << why;
  ASSERT_TRUE(late.subscribe(1, kHealthyTopic));
  ASSERT_TRUE(testing::collect_until(late, late_model, [&] { return late_model.messages_on(kHealthyTopic) > 0; }));
  EXPECT_EQ(late_model.find(kHealthyTopic)->seq, model.find(kHealthyTopic)->seq);
  EXPECT_TRUE(testing::same_fields(late_model.find(kHealthyTopic)->image, model.find(kHealthyTopic)->image, &why))
      << why;
}

TEST_F(BadInput, SilentConnectionIsDroppedAfterHelloTimeout) {
  ASSERT_NO_FATAL_FAILURE(start({.config_toml = "# test config\nhello_timeout_ms = 300\n"}));
  RawClient c;
  ASSERT_NO_FATAL_FAILURE(open_offender(c, false));
  ASSERT_NO_FATAL_FAILURE(expect_dropped_with(c, Code::IdleTimeout));
}

TEST_F(BadInput, AbruptDisconnectMidFrame) {
  ASSERT_NO_FATAL_FAILURE(start());
  for (int round = 0; round < 3; ++round) {
    RawClient c;
    ASSERT_NO_FATAL_FAILURE(open_offender(c, true));
    ASSERT_TRUE(c.register_topic(3, PayloadKind::FieldList, "HALF/T"));
    auto payload = field_list({{1, int64_t{1}}, {2, std::string(100, 'x')}});
    std::vector<uint8_t> frame(256);
    frame.resize(wire::encode(frame, wire::Publish{3, false, payload}));
    ASSERT_TRUE(c.send_raw(std::span<const uint8_t>(frame).first(frame.size() / 2)));
    c.close();
    ASSERT_NO_FATAL_FAILURE(expect_healthy());
  }
}

TEST_F(BadInput, SubscribeFloodPastTheLimitIsDropped) {
  constexpr int kLimit = 10;
  ASSERT_NO_FATAL_FAILURE(start({.args = {"--max-subscriptions", std::to_string(kLimit)}}));
  RawClient c;
  ASSERT_NO_FATAL_FAILURE(open_offender(c, true));
  for (int i = 0; i < kLimit; ++i) {
    auto ack = c.subscribe(i + 1, "FLOOD/" + std::to_string(i));
    ASSERT_TRUE(ack && ack->code == Code::Ok) << i;
  }
  auto again = c.subscribe(50, "FLOOD/0");  // an existing pattern does not count twice
  ASSERT_TRUE(again && again->code == Code::Ok);
  for (int i = kLimit; i < kLimit + 100; ++i) {
    if (!c.send_subscribe(i + 1, "FLOOD/" + std::to_string(i))) break;  // the broker may close first
  }
  ASSERT_NO_FATAL_FAILURE(expect_dropped_with(c, Code::TooManySubscriptions));
}

TEST_F(BadInput, ConnectionLimitRefusesTheExtraConnection) {
  // Healthy pub + sub take two of the three.
  ASSERT_NO_FATAL_FAILURE(start({.args = {"--max-connections", "3"}}));
  RawClient third;
  ASSERT_NO_FATAL_FAILURE(open_offender(third, true));
  RawClient fourth;
  ASSERT_TRUE(fourth.connect(broker->port()));
  ASSERT_NO_FATAL_FAILURE(expect_dropped_with(fourth, Code::TooManyConnections));
  // A freed slot is reused: retry while the broker notices the close (safety-bounded).
  third.close();
  bool accepted = false;
  for (int attempt = 0; attempt < 200 && !accepted; ++attempt) {
    RawClient again;
    ASSERT_TRUE(again.connect(broker->port()));
    auto reply = again.hello("again");
    accepted = reply && reply->type() == wire::MsgType::Welcome;
    if (!accepted) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_TRUE(accepted) << "the freed connection slot was never reused";
  ASSERT_NO_FATAL_FAILURE(expect_healthy());
}

// A subscriber that never reads is disconnected once its queue passes
// max_output_buffer; a reading subscriber of the same flood gets everything.
TEST_F(BadInput, SlowConsumerIsDisconnectedOthersUnaffected) {
  // The disconnect policy (the default is conflate: tests/integration/it14).
  ASSERT_NO_FATAL_FAILURE(start({.args = {"--max-output-buffer", std::to_string(1 << 20),
                                          "--slow-consumer-policy", "disconnect"}}));
  ASSERT_TRUE(pub.register_topic(2, PayloadKind::Opaque, "FLOOD/X"));
  RawClient slow;
  ASSERT_TRUE(slow.connect(broker->port(), testing::kDefaultTimeoutMs, /*rcvbuf=*/4096));
  auto w = slow.hello("slow");
  ASSERT_TRUE(w && w->type() == wire::MsgType::Welcome);
  ASSERT_TRUE(slow.subscribe(1, "FLOOD/>"));
  RawClient fast;
  std::string why;
  ASSERT_TRUE(open_client(fast, broker->port(), "fast", &why)) << why;
  ASSERT_TRUE(fast.subscribe(1, "FLOOD/>"));

  // The publisher goes in lockstep with the fast subscriber (one batch in
  // flight), so only the slow one can fall behind: 24 MiB in total, far more
  // than its socket buffers plus the 1 MiB limit.
  constexpr int kBatches = 96;
  constexpr int kPerBatch = 256;
  std::vector<uint8_t> payload(1024, 0x5A);
  StreamModel fast_model;
  for (int b = 0; b < kBatches; ++b) {
    std::vector<uint8_t> batch;
    for (int i = 0; i < kPerBatch; ++i) {
      testing::append_frame(batch, wire::kPublishFixedSize + payload.size(), [&](std::span<uint8_t> out) {
        return wire::encode(out, wire::Publish{2, false, payload});
      });
    }
    ASSERT_TRUE(pub.send_raw(batch));
    uint64_t want = static_cast<uint64_t>(b + 1) * kPerBatch;
    ASSERT_TRUE(testing::collect_until(fast, fast_model, [&] { return fast_model.messages_on("FLOOD/X") == want; }))
        << "the fast subscriber stalled in batch " << b;
  }
  EXPECT_TRUE(fast_model.errors().empty()) << fast_model.errors().front();
  // Reading the slow consumer now drains what was queued, then meets the close.
  EXPECT_TRUE(slow.wait_closed()) << "the slow consumer was never disconnected";
  ASSERT_NO_FATAL_FAILURE(expect_healthy());
}

}  // namespace
}  // namespace tw::it
