#include "perf/field_payload.h"

#include <gtest/gtest.h>

#include <vector>

#include "tickwire/fields/field_list.h"
#include "perf/consumer.h"

namespace tw::perf {
namespace {

ProbeHeader header_for(uint64_t seq) {
  ProbeHeader h;
  h.seq = seq;
  h.send_ns = 1000;
  h.publisher_id = 2;
  h.topic_index = 3;
  return h;
}

// A copy of `payload` without value field `drop_fid`, or with `bump_fid`'s value changed.
std::vector<uint8_t> rewrite(std::span<const uint8_t> payload, uint16_t drop_fid, uint16_t bump_fid) {
  std::vector<uint8_t> out(payload.size());
  fields::FieldListWriter writer(out);
  fields::for_each(payload, [&](uint16_t id, const fields::FieldValue& v) {
    if (id == drop_fid) return;
    fields::FieldValue copy = v;
    if (id == bump_fid) ++copy.i;
    writer.add(id, copy);
  });
  out.resize(writer.finish());
  return out;
}

TEST(FieldPayload, EveryFieldFollowsFromTheHeaderSeq) {
  FieldPayload payload(20);
  auto bytes = payload.build(header_for(7));
  ASSERT_TRUE(fields::validate(bytes));
  FieldCheck check = check_fields(bytes, 20);
  ASSERT_TRUE(check.header);
  EXPECT_EQ(*check.header, header_for(7));
  EXPECT_EQ(check.missing, 0u);
  EXPECT_EQ(check.wrong, 0u);
}

TEST(FieldPayload, AnAbsentFieldIsMissingAndAChangedOneWrong) {
  FieldPayload payload(5);
  auto bytes = payload.build(header_for(9));
  FieldCheck dropped = check_fields(rewrite(bytes, kFirstValueFid + 3, 0), 5);
  EXPECT_EQ(dropped.missing, 1u);
  EXPECT_EQ(dropped.wrong, 0u);
  FieldCheck bumped = check_fields(rewrite(bytes, 0, kFirstValueFid + 1), 5);
  EXPECT_EQ(bumped.missing, 0u);
  EXPECT_EQ(bumped.wrong, 1u);
}

TEST(FieldPayload, WithoutTheHeaderFieldThereIsNoHeader) {
  FieldPayload payload(3);
  auto bytes = payload.build(header_for(1));
  EXPECT_FALSE(check_fields(rewrite(bytes, kHeaderFid, 0), 3).header);
  const uint8_t opaque[40] = {};
  EXPECT_FALSE(check_fields(opaque, 3).header);
}

TEST(FieldPayload, BuildingAgainReusesTheBuffer) {
  FieldPayload payload(10);
  const uint8_t* first = payload.build(header_for(1)).data();
  EXPECT_EQ(payload.build(header_for(2)).data(), first);
}

TEST(FieldPayload, ConsumerCountsMissingFids) {
  Consumer consumer(5);
  FieldPayload payload(5);
  auto whole = payload.build(header_for(1));
  consumer.on_message(whole, false, 2000);
  auto second = payload.build(header_for(2));
  consumer.on_message(rewrite(second, kFirstValueFid, 0), false, 2000);
  EXPECT_EQ(consumer.totals().received, 2u);
  EXPECT_EQ(consumer.totals().gaps, 0u);
  EXPECT_EQ(consumer.totals().missing_fids, 1u);
  EXPECT_EQ(consumer.totals().wrong_values, 0u);
}

}  // namespace
}  // namespace tw::perf
