// split_frame must find the same frames however the byte stream is cut into
// reads: at every single split point, at every pair of split points, and one
// byte at a time (the idea of nats-server's split_test.go).
#include <gtest/gtest.h>

#include "wire_test_support.h"

namespace tw::wiretest {
namespace {

using namespace tw::wire;

// What a connection does with its read buffer: append what arrived, then take
// every complete frame off the front.
class Reassembler {
 public:
  void feed(std::span<const uint8_t> chunk) {
    pending_.insert(pending_.end(), chunk.begin(), chunk.end());
    size_t used = 0;
    Frame f;
    for (;;) {
      auto rest = std::span<const uint8_t>(pending_).subspan(used);
      SplitResult r = split_frame(rest, kDefaultMaxFrame, f);
      if (r != SplitResult::Frame) {
        if (r != SplitResult::NeedMore) broken_ = true;
        break;
      }
      ASSERT_LE(f.size, rest.size());
      ASSERT_EQ(f.body.size() + kHeaderSize, f.size);
      ASSERT_EQ(f.body.data(), rest.data() + kHeaderSize);
      frames_.emplace_back(rest.begin(), rest.begin() + f.size);
      used += f.size;
    }
    pending_.erase(pending_.begin(), pending_.begin() + used);
  }
  const std::vector<Bytes>& frames() const { return frames_; }
  size_t pending() const { return pending_.size(); }
  bool broken() const { return broken_; }

 private:
  Bytes pending_;
  std::vector<Bytes> frames_;
  bool broken_ = false;
};

struct Stream {
  Bytes bytes;
  std::vector<Bytes> frames;
};

Stream every_sample_back_to_back() {
  Stream s;
  for (const Sample& sample : all_samples()) {
    s.bytes.insert(s.bytes.end(), sample.frame.begin(), sample.frame.end());
    s.frames.push_back(sample.frame);
  }
  return s;
}

std::span<const uint8_t> slice(const Bytes& b, size_t from, size_t to) {
  return std::span<const uint8_t>(b).subspan(from, to - from);
}

void expect_all_frames(const Reassembler& r, const Stream& s) {
  EXPECT_FALSE(r.broken());
  EXPECT_EQ(r.pending(), 0u);
  EXPECT_EQ(r.frames(), s.frames);
}

TEST(SplitFrame, WholeBufferYieldsEveryFrameInOrder) {
  Stream s = every_sample_back_to_back();
  Reassembler r;
  r.feed(s.bytes);
  expect_all_frames(r, s);
}

TEST(SplitFrame, EverySplitPoint) {
  Stream s = every_sample_back_to_back();
  for (size_t cut = 0; cut <= s.bytes.size(); ++cut) {
    SCOPED_TRACE(cut);
    Reassembler r;
    r.feed(slice(s.bytes, 0, cut));
    r.feed(slice(s.bytes, cut, s.bytes.size()));
    expect_all_frames(r, s);
    if (HasFailure()) return;
  }
}

TEST(SplitFrame, EveryPairOfSplitPoints) {
  Stream s = every_sample_back_to_back();
  const size_t n = s.bytes.size();
  for (size_t a = 0; a <= n; ++a) {
    for (size_t b = a; b <= n; ++b) {
      Reassembler r;
      r.feed(slice(s.bytes, 0, a));
      r.feed(slice(s.bytes, a, b));
      r.feed(slice(s.bytes, b, n));
      ASSERT_FALSE(r.broken()) << a << "," << b;
      ASSERT_EQ(r.pending(), 0u) << a << "," << b;
      ASSERT_EQ(r.frames(), s.frames) << a << "," << b;
    }
  }
}

TEST(SplitFrame, OneByteAtATime) {
  Stream s = every_sample_back_to_back();
  Reassembler r;
  size_t frames_before = 0;
  for (size_t i = 0; i < s.bytes.size(); ++i) {
    r.feed(slice(s.bytes, i, i + 1));
    // A frame completes exactly when its last byte arrives, never earlier.
    ASSERT_LE(r.frames().size(), frames_before + 1);
    frames_before = r.frames().size();
  }
  expect_all_frames(r, s);
}

TEST(SplitFrame, EveryProperPrefixOfAFrameNeedsMore) {
  for (const Sample& sample : all_samples()) {
    SCOPED_TRACE(sample.name);
    Frame f;
    for (size_t len = 0; len < sample.frame.size(); ++len) {
      EXPECT_EQ(split_frame(slice(sample.frame, 0, len), kDefaultMaxFrame, f), SplitResult::NeedMore) << len;
    }
  }
}

TEST(SplitFrame, FrameEndsAtItsLengthNotAtTheBufferEnd) {
  Bytes hb = all_samples().at(0).frame;
  Bytes buf = hb;
  buf.push_back(0xEE);  // first byte of whatever comes next
  Frame f;
  ASSERT_EQ(split_frame(buf, kDefaultMaxFrame, f), SplitResult::Frame);
  EXPECT_EQ(f.size, hb.size());
  EXPECT_EQ(f.body.size(), hb.size() - kHeaderSize);
}

TEST(SplitFrame, UnknownTypeIsStillAFrame) {
  // Splitting is type-agnostic; rejecting unknown types is the session's job.
  Bytes frame = from_hex("09 00 00 00 7f 00 00 00 aa");
  Frame f;
  ASSERT_EQ(split_frame(frame, kDefaultMaxFrame, f), SplitResult::Frame);
  EXPECT_EQ(static_cast<uint8_t>(f.type), 0x7f);
  EXPECT_EQ(f.body.size(), 1u);
}

TEST(PeekLength, NeedsFourBytes) {
  Bytes frame = all_samples().at(0).frame;
  for (size_t len = 0; len < 4; ++len) EXPECT_EQ(peek_length(slice(frame, 0, len)), 0u);
  EXPECT_EQ(peek_length(slice(frame, 0, 4)), frame.size());
  EXPECT_EQ(peek_length(from_hex("78 56 34 12")), 0x12345678u);
}

}  // namespace
}  // namespace tw::wiretest
