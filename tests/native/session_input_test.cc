// A session's input memory and time bounds, and the paced LIST_CHANNELS, in
// process: a real NativeSession on a socketpair, ticks and turns driven by
// hand with chosen clock values.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "base/clock.h"
#include "native/session_harness.h"
#include "tickwire/wire/codec.h"

namespace tw::broker {
namespace {

constexpr uint64_t kMs = 1'000'000;

std::vector<uint8_t> frame_of(const auto& message, size_t max = 1 << 21) {
  std::vector<uint8_t> out(max);
  out.resize(wire::encode(out, message));
  return out;
}

class SessionInputTest : public ::testing::Test, protected testing::SessionHarness {
 protected:
  void start(int socket_buffer = 0) {
    open(RouterLimits{}, monotonic_ns(), socket_buffer);
    send(frame_of(wire::Hello{1, 1, 0, "input"}));
    ASSERT_FALSE(session->closing());
    send(frame_of(wire::Register{1, wire::PayloadKind::Opaque, "BIG/1"}));
    ASSERT_FALSE(session->closing());
  }
  // A PUBLISH of `size` opaque bytes on publish id 1.
  std::vector<uint8_t> publish(size_t size) {
    payload.assign(size, 0x5A);
    return frame_of(wire::Publish{1, true, payload});
  }
  // Sends bytes [from, to) of `frame` in writes the session reads one at a time.
  void send_part(const std::vector<uint8_t>& frame, size_t from, size_t to) {
    for (size_t at = from; at < to;) {
      const size_t n = std::min<size_t>(60'000, to - at);
      send({frame.begin() + at, frame.begin() + at + n});
      at += n;
    }
  }
  std::vector<uint8_t> payload;
};

TEST_F(SessionInputTest, AnIdleSessionHoldsNoInputBuffer) {
  start();
  EXPECT_EQ(loop.input.held(), 0u) << "whole frames are parsed in the loop's read buffer";
  EXPECT_EQ(loop.input.holders(), 0u);
}

TEST_F(SessionInputTest, APartialFrameHoldsWhatArrivedNotWhatItsHeaderClaims) {
  start();
  const auto frame = publish(1'000'000);  // claims about 1 MB
  send({frame.begin(), frame.begin() + 100});
  EXPECT_GT(loop.input.held(), 0u);
  EXPECT_LE(loop.input.held(), 4096u) << "a few KiB for 100 bytes, not the megabyte the header claims";
  EXPECT_EQ(counters.partial_input_bytes, loop.input.held());
  // The rest arrives in reads of up to 64 KiB: the buffer grows with them.
  size_t sent = 100;
  while (sent < frame.size()) {
    const size_t n = std::min<size_t>(60'000, frame.size() - sent);
    send({frame.begin() + sent, frame.begin() + sent + n});
    sent += n;
    if (sent < frame.size()) {
      EXPECT_LE(loop.input.held(), 2 * sent + 65536) << "at " << sent << " bytes";
    }
  }
  ASSERT_FALSE(session->closing());
  EXPECT_EQ(router->stats().publishes, 1u);
}

TEST_F(SessionInputTest, TheBufferIsFreedOnceTheConnectionIsQuiet) {
  start();
  const auto frame = publish(200'000);
  send_part(frame, 0, 1000);
  send_part(frame, 1000, frame.size());
  ASSERT_EQ(router->stats().publishes, 1u);
  EXPECT_GT(loop.input.held(), 0u) << "kept while the connection is busy";
  session->on_tick(monotonic_ns() + 500 * kMs);
  EXPECT_FALSE(session->closing());
  EXPECT_EQ(loop.input.held(), 0u);
  EXPECT_EQ(counters.partial_input_bytes, 0u);
}

TEST_F(SessionInputTest, AFrameNotWholeWithinTheDeadlineClosesTheConnection) {
  config.frame_deadline_ms = 2000;
  start();
  const auto frame = publish(1000);
  const uint64_t began = monotonic_ns();
  send({frame.begin(), frame.begin() + 10});
  session->on_tick(began + 1000 * kMs);
  EXPECT_FALSE(session->closing()) << "within the deadline";
  send({frame.begin() + 10, frame.begin() + 11});  // a byte more does not restart the frame's clock
  session->on_tick(began + 2500 * kMs);
  EXPECT_TRUE(session->closing());
  EXPECT_EQ(counters.frame_deadline_closes, 1u);
  EXPECT_EQ(counters.idle_timeouts, 0u);
}

TEST_F(SessionInputTest, EachFrameHasItsOwnDeadline) {
  config.frame_deadline_ms = 2000;
  start();
  const auto frame = publish(1000);
  std::vector<uint8_t> two(frame);
  two.insert(two.end(), frame.begin(), frame.begin() + 10);  // one whole frame, and the start of the next
  send({frame.begin(), frame.begin() + 10});
  const uint64_t first = monotonic_ns();
  session->on_tick(first + 1500 * kMs);
  send({two.begin() + 10, two.end()});
  const uint64_t second = monotonic_ns();
  session->on_tick(second + 1500 * kMs);
  EXPECT_FALSE(session->closing()) << "the second frame began later";
  EXPECT_EQ(router->stats().publishes, 1u);
}

TEST_F(SessionInputTest, PastTheBudgetTheLargestPartialFrameIsClosed) {
  loop.input = session::InputBudget(16 * 1024);
  start();
  const auto frame = publish(100'000);
  send({frame.begin(), frame.begin() + 30'000});
  EXPECT_TRUE(session->closing());
  EXPECT_EQ(counters.partial_input_closes, 1u);
  EXPECT_EQ(loop.input.held(), 0u) << "its memory is given back at once";
}

// A LIST_CHANNELS whose client does not read: the rows are produced as the
// output drains, never more than a page ahead; once the client reads, every
// row arrives, then the ACK.
TEST_F(SessionInputTest, AListingIsPacedByTheOutputAndComplete) {
  start(/*socket_buffer=*/16 * 1024);
  constexpr size_t kChannels = 20'000;
  for (size_t i = 0; i < kChannels; ++i) {
    cache::ChannelId id = 0;
    ASSERT_TRUE(router->advertise("LIST/" + std::to_string(i), wire::PayloadKind::Opaque, id).ok());
  }
  send(frame_of(wire::ListChannels{77, ""}));
  size_t most_queued = 0;
  for (int t = 0; t < 50; ++t) {  // turns while the client reads nothing
    session::Session::pace_all(loop);
    turn();
    most_queued = std::max(most_queued, session->queued_output());
  }
  EXPECT_FALSE(session->closing());
  EXPECT_LE(most_queued, 512u * 1024) << "a page ahead of the socket, not the whole listing";
  // Now the client reads: every row, then the ACK.
  size_t rows = 0;
  bool acked = false;
  std::vector<uint8_t> in;
  std::vector<uint8_t> chunk(1 << 16);
  for (int t = 0; t < 100'000 && !acked; ++t) {
    session::Session::pace_all(loop);
    turn();
    const ssize_t n = ::read(peer, chunk.data(), chunk.size());
    if (n > 0) in.insert(in.end(), chunk.begin(), chunk.begin() + n);
    if (n > 0) session->on_io(EPOLLOUT);
    size_t pos = 0;
    wire::Frame frame;
    while (wire::split_frame({in.data() + pos, in.size() - pos}, ~uint32_t{0}, frame) == wire::SplitResult::Frame) {
      if (frame.type == wire::MsgType::ChannelInfo) ++rows;
      if (frame.type == wire::MsgType::Ack) {
        wire::Ack ack;
        ASSERT_TRUE(wire::decode(frame, ack));
        if (ack.request_id == 77) acked = true;
        EXPECT_EQ(rows, kChannels + 1) << "the ACK follows the last row (BIG/1 is listed too)";
      }
      pos += frame.size;
    }
    in.erase(in.begin(), in.begin() + pos);
  }
  EXPECT_TRUE(acked);
  EXPECT_EQ(rows, kChannels + 1);
  EXPECT_FALSE(session->paced());
}

}  // namespace
}  // namespace tw::broker
