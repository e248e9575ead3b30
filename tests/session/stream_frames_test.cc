// StreamFrames: a stream message is encoded at most once per protocol,
// whatever the number of subscribers, re-encoded only after the arena it was
// in has been reset, and a pinned frame (a gateway's ring record) is never re-encoded.
#include <gtest/gtest.h>

#include "output/stream_frames.h"
#include "native/encoder.h"
#include "session/test_encoder.h"

namespace tw::session {
namespace {

TEST(StreamFrames, EncodesOncePerProtocolAndSharesTheBytes) {
  output::Fanout fanout(1 << 16);
  cache::Channel ch;
  ch.id = 7;
  ch.seq = 42;
  const std::vector<uint8_t> payload = {1, 2, 3, 4};
  output::StreamFrames frames(fanout, ch, payload, false);
  const auto& native = native::NativeEncoder::instance();
  const testing::TestEncoder test;
  auto first = frames.get(native);
  for (int subscriber = 0; subscriber < 100; ++subscriber) {
    EXPECT_EQ(frames.get(native).data(), first.data());
    (void)frames.get(test);
  }
  EXPECT_EQ(frames.encodes(), 2u);
  std::vector<uint8_t> bytes(first.begin(), first.end());
  std::vector<testing::Event> events;
  testing::decode_native(bytes, events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, 'U');
  EXPECT_EQ(events[0].seq, 42u);
  EXPECT_EQ(events[0].body, payload);
}

TEST(StreamFrames, ReencodesOnlyAfterTheArenaWasReset) {
  output::Fanout fanout(1 << 16);
  cache::Channel ch;
  ch.id = 1;
  const std::vector<uint8_t> payload(100, 9);
  output::StreamFrames frames(fanout, ch, payload, true);
  const auto& native = native::NativeEncoder::instance();
  (void)frames.get(native);
  fanout.flush_all();  // the turn's arena is reset: the frame is gone
  auto again = frames.get(native);
  EXPECT_EQ(frames.encodes(), 2u);
  std::vector<uint8_t> bytes(again.begin(), again.end());
  std::vector<testing::Event> events;
  testing::decode_native(bytes, events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, 'I');
}

TEST(StreamFrames, APinnedFrameIsNeverReencoded) {
  output::Fanout fanout(1 << 16);
  cache::Channel ch;
  const std::vector<uint8_t> payload = {5};
  const std::vector<uint8_t> ring_record = {0xAA, 0xBB};
  output::StreamFrames frames(fanout, ch, payload, false);
  frames.pin(output::StreamEncoder::kNativeSlot, ring_record);
  fanout.flush_all();
  EXPECT_EQ(frames.get(native::NativeEncoder::instance()).data(), ring_record.data());
  EXPECT_EQ(frames.encodes(), 0u);
  const testing::TestEncoder test;  // another protocol still encodes its own
  (void)frames.get(test);
  EXPECT_EQ(frames.encodes(), 1u);
}

}  // namespace
}  // namespace tw::session
