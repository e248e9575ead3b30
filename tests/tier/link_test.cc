// Records (the link's message format) and Pipe (a ring plus an ordered
// spill buffer for when the ring is full).
#include "tier/link.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace tw::tier {
namespace {

std::vector<uint8_t> encode(const Record& r) {
  std::vector<uint8_t> out(record_size(r));
  write_record(out, r);
  return out;
}

TEST(Record, SizeIsHeaderStringsTerminatorsAndBytes) {
  Record r{Op::Publish};
  EXPECT_EQ(record_size(r), kRecordHeader + 2);
  const uint8_t payload[5] = {1, 2, 3, 4, 5};
  r.a = "abc";
  r.b = "de";
  r.bytes = payload;
  EXPECT_EQ(record_size(r), kRecordHeader + 3 + 1 + 2 + 1 + 5);
}

TEST(Record, EveryOpRoundTripsWithAllFields) {
  const uint8_t payload[] = {0, 0xff, 7, 0, 42, 9};
  for (int op = static_cast<int>(Op::Interest); op <= static_cast<int>(Op::Done); ++op) {
    SCOPED_TRACE("op " + std::to_string(op));
    const std::string a = "TOPIC/" + std::to_string(op), b = "pattern." + std::to_string(op * 3);
    Record in{static_cast<Op>(op)};
    in.flags = static_cast<uint8_t>(op + 1);
    in.state = wire::ChannelState::Stale;
    in.code = wire::Code::NotFound;
    in.token = 0x01020304u + static_cast<uint32_t>(op);
    in.id = 0xA0B0C0D0u - static_cast<uint32_t>(op);
    in.arg = 0xFFFFFFFFu - static_cast<uint32_t>(op);
    in.a = a;
    in.b = b;
    in.bytes = payload;
    const auto bytes = encode(in);

    Record out;
    ASSERT_TRUE(read_record(bytes, out));
    EXPECT_EQ(out.op, in.op);
    EXPECT_EQ(out.flags, in.flags);
    EXPECT_EQ(out.state, in.state);
    EXPECT_EQ(out.code, in.code);
    EXPECT_EQ(out.token, in.token);
    EXPECT_EQ(out.id, in.id);
    EXPECT_EQ(out.arg, in.arg);
    EXPECT_EQ(out.a, a);
    EXPECT_EQ(out.b, b);
    // The texts are C strings in place: usable as detail texts without a copy.
    EXPECT_EQ(out.a.data()[out.a.size()], '\0');
    EXPECT_EQ(out.b.data()[out.b.size()], '\0');
    EXPECT_STREQ(out.a.data(), a.c_str());
    EXPECT_STREQ(out.b.data(), b.c_str());
    ASSERT_EQ(out.bytes.size(), sizeof payload);
    EXPECT_EQ(std::memcmp(out.bytes.data(), payload, sizeof payload), 0);
    // Views point into the input, not into a copy.
    EXPECT_GE(reinterpret_cast<const uint8_t*>(out.a.data()), bytes.data());
    EXPECT_LT(reinterpret_cast<const uint8_t*>(out.a.data()), bytes.data() + bytes.size());
  }
}

TEST(Record, EmptyStringsAndBytesRoundTrip) {
  Record in{Op::OutletGone};
  in.token = 77;
  const auto bytes = encode(in);
  Record out;
  ASSERT_TRUE(read_record(bytes, out));
  EXPECT_EQ(out.op, Op::OutletGone);
  EXPECT_EQ(out.token, 77u);
  EXPECT_TRUE(out.a.empty());
  EXPECT_TRUE(out.b.empty());
  EXPECT_EQ(out.a.data()[0], '\0');
  EXPECT_EQ(out.b.data()[0], '\0');
  EXPECT_TRUE(out.bytes.empty());
}

TEST(Record, LongestStringsRoundTrip) {
  const std::string a(65535, 'x'), b(65535, 'y');  // u16 lengths
  Record in{Op::Provide};
  in.a = a;
  in.b = b;
  const auto bytes = encode(in);
  Record out;
  ASSERT_TRUE(read_record(bytes, out));
  EXPECT_EQ(out.a, a);
  EXPECT_EQ(out.b, b);
  EXPECT_TRUE(out.bytes.empty());
}

// A Publish with MQTT 5 properties: they go ahead of the payload without a
// copy of their own, and the reader sees one run of bytes (the gateway
// splits it at `arg`), in the ring and through the spill alike.
TEST(Record, APrefixIsWrittenJustBeforeTheBytes) {
  const uint8_t props[] = {9, 8, 7}, payload[] = {1, 2};
  Record in{Op::Publish};
  in.flags = kFlagAttributes;
  in.arg = sizeof props;
  in.prefix = props;
  in.bytes = payload;
  EXPECT_EQ(record_size(in), kRecordHeader + 2 + 5);
  Pipe pipe(4096);
  size_t pushed = 0, read = 0;
  for (; pipe.spilled_bytes() == 0; ++pushed) pipe.push(in);  // the last one spilled
  for (int pass = 0; pass < 2; ++pass) {
    for (auto bytes = pipe.ring().read(); !bytes.empty(); bytes = pipe.ring().read(), ++read) {
      Record out;
      ASSERT_TRUE(read_record(bytes, out));
      EXPECT_EQ(out.arg, 3u);
      EXPECT_EQ(std::vector<uint8_t>(out.bytes.begin(), out.bytes.end()), (std::vector<uint8_t>{9, 8, 7, 1, 2}));
    }
    pipe.ring().release();
    EXPECT_TRUE(pipe.drain_spill());
  }
  EXPECT_EQ(read, pushed);
}

TEST(Record, TruncatedHeaderOrStringsAreRejected) {
  const uint8_t payload[] = {1, 2, 3};
  Record in{Op::Snapshot};
  in.a = "SOME/TOPIC";
  in.b = "svc";
  in.bytes = payload;
  const auto bytes = encode(in);
  const size_t texts_end = kRecordHeader + in.a.size() + 1 + in.b.size() + 1;
  for (size_t n = 0; n < texts_end; ++n) {
    Record out;
    EXPECT_FALSE(read_record({bytes.data(), n}, out)) << "accepted " << n << " of " << bytes.size() << " bytes";
  }
  // The bytes are "the rest of the record": a shorter record has fewer of them.
  Record out;
  ASSERT_TRUE(read_record({bytes.data(), texts_end + 1}, out));
  EXPECT_EQ(out.bytes.size(), 1u);
}

// --- Pipe

// A record whose id is its sequence number and whose bytes are a pattern of it.
struct Numbered {
  explicit Numbered(uint32_t n, size_t size = 200) : body(size) {
    for (size_t i = 0; i < size; ++i) body[i] = static_cast<uint8_t>(n + i);
    record.op = Op::Publish;
    record.id = n;
    record.a = "T";
    record.bytes = body;
  }
  std::vector<uint8_t> body;
  Record record;
};

// Reads every record now in the ring, checks they continue the sequence, releases.
uint32_t drain_ring(Pipe& pipe, uint32_t next_expected) {
  SpscRing& ring = pipe.ring();
  for (auto bytes = ring.read(); !bytes.empty(); bytes = ring.read()) {
    Record r;
    EXPECT_TRUE(read_record(bytes, r));
    EXPECT_EQ(r.id, next_expected);
    Numbered want(next_expected);
    EXPECT_EQ(r.bytes.size(), want.body.size());
    EXPECT_TRUE(r.bytes.size() == want.body.size() &&
                std::memcmp(r.bytes.data(), want.body.data(), want.body.size()) == 0)
        << "record " << next_expected;
    ++next_expected;
  }
  ring.release();
  return next_expected;
}

TEST(Pipe, RecordsGoToTheRingWhileItHasRoom) {
  Pipe pipe(4096);
  for (uint32_t n = 0; n < 5; ++n) pipe.push(Numbered(n).record);
  EXPECT_EQ(pipe.spilled_bytes(), 0u);
  EXPECT_TRUE(pipe.drain_spill());
  EXPECT_EQ(drain_ring(pipe, 0), 5u);
}

TEST(Pipe, FullRingSpillsAndCountsTheSpilledBytes) {
  Pipe pipe(4096);
  const size_t each = record_size(Numbered(0).record);
  uint32_t n = 0;
  while (pipe.spilled_bytes() == 0) pipe.push(Numbered(n++).record);
  const uint32_t in_ring = n - 1;
  EXPECT_GT(in_ring, 10u);
  // Each spilled record costs its size plus a 4-byte length.
  EXPECT_EQ(pipe.spilled_bytes(), 4 + each);
  for (int i = 0; i < 9; ++i) pipe.push(Numbered(n++).record);
  EXPECT_EQ(pipe.spilled_bytes(), 10 * (4 + each));
  // Nothing frees ring space yet: the spill stays.
  EXPECT_FALSE(pipe.drain_spill());
  EXPECT_EQ(pipe.spilled_bytes(), 10 * (4 + each));
}

TEST(Pipe, SpilledRecordsKeepTheirOrderEvenWhenTheRingHasRoomAgain) {
  Pipe pipe(4096);
  uint32_t n = 0;
  while (pipe.spilled_bytes() == 0) pipe.push(Numbered(n++).record);
  const size_t spilled_once = pipe.spilled_bytes();
  // The consumer empties the ring, but the producer has not drained its spill:
  // a new record must queue behind the spilled one, not jump ahead into the ring.
  uint32_t expected = drain_ring(pipe, 0);
  pipe.push(Numbered(n++).record);
  EXPECT_EQ(pipe.spilled_bytes(), 2 * spilled_once);
  EXPECT_TRUE(pipe.ring().empty());
  EXPECT_TRUE(pipe.drain_spill());
  EXPECT_EQ(pipe.spilled_bytes(), 0u);
  expected = drain_ring(pipe, expected);
  EXPECT_EQ(expected, n);
}

TEST(Pipe, DrainSpillMovesRecordsAsSpaceFrees) {
  Pipe pipe(4096);
  const size_t each = 4 + record_size(Numbered(0).record);
  uint32_t n = 0;
  for (; n < 200; ++n) pipe.push(Numbered(n).record);  // ~17 fit in the ring, the rest spill
  size_t spilled = pipe.spilled_bytes();
  ASSERT_GT(spilled, 150 * each);
  EXPECT_EQ(spilled % each, 0u);

  uint32_t expected = 0;
  int rounds = 0;
  while (true) {
    expected = drain_ring(pipe, expected);
    const bool done = pipe.drain_spill();
    const size_t now = pipe.spilled_bytes();
    if (done) {
      EXPECT_EQ(now, 0u);
      break;
    }
    // Each round moves some records, whole, into the freed ring.
    EXPECT_LT(now, spilled);
    EXPECT_EQ(now % each, 0u);
    spilled = now;
    ASSERT_LT(++rounds, 200) << "the spill does not drain";
  }
  expected = drain_ring(pipe, expected);
  EXPECT_EQ(expected, 200u);
  // Afterwards the pipe is back to the ring-only path.
  pipe.push(Numbered(200).record);
  EXPECT_EQ(pipe.spilled_bytes(), 0u);
  EXPECT_EQ(drain_ring(pipe, 200), 201u);
}

TEST(Pipe, LinkHasOnePipePerDirection) {
  Link link(4096);
  link.to_gateway.push(Numbered(0).record);
  EXPECT_FALSE(link.to_gateway.ring().empty());
  EXPECT_TRUE(link.to_access_point.ring().empty());
  link.to_access_point.push(Numbered(0).record);
  link.to_access_point.push(Numbered(1).record);
  EXPECT_EQ(drain_ring(link.to_access_point, 0), 2u);
  EXPECT_EQ(drain_ring(link.to_gateway, 0), 1u);
}

}  // namespace
}  // namespace tw::tier
