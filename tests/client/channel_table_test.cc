#include <gtest/gtest.h>

#include "tickwire/client/channel_table.h"

namespace tw::client {
namespace {

TEST(ChannelTable, ImageSetsBaselineAndConsecutiveUpdatesAreNotGaps) {
  ChannelTable table;
  ChannelRecord& ch = table.introduce(7, wire::PayloadKind::FieldList, "A/B");
  ChannelTable::on_image(ch, 12);
  auto first = ChannelTable::on_update(ch, 13);
  EXPECT_FALSE(first.gap);
  EXPECT_EQ(first.expected, 13u);
  EXPECT_FALSE(ChannelTable::on_update(ch, 14).gap);
}

TEST(ChannelTable, MissingSequenceIsOneGapThenResynchronises) {
  ChannelTable table;
  ChannelRecord& ch = table.introduce(1, wire::PayloadKind::FieldList, "A");
  ChannelTable::on_image(ch, 1);
  auto skipped = ChannelTable::on_update(ch, 4);
  EXPECT_TRUE(skipped.gap);
  EXPECT_EQ(skipped.expected, 2u);
  EXPECT_FALSE(ChannelTable::on_update(ch, 5).gap);
  EXPECT_TRUE(ChannelTable::on_update(ch, 5).gap) << "a repeated seq is also out of order";
}

TEST(ChannelTable, UpdateWithoutBaselineIsNotAGap) {
  ChannelTable table;
  ChannelRecord& ch = table.get_or_add(3);
  auto check = ChannelTable::on_update(ch, 40);
  EXPECT_FALSE(check.gap);
  EXPECT_EQ(check.expected, 0u);
  EXPECT_TRUE(ChannelTable::on_update(ch, 42).gap);
}

TEST(ChannelTable, ReintroductionOverwritesTopicAndForgetsSequence) {
  ChannelTable table;
  ChannelRecord& ch = table.introduce(9, wire::PayloadKind::FieldList, "OLD");
  ChannelTable::on_image(ch, 100);
  ChannelRecord& again = table.introduce(9, wire::PayloadKind::Opaque, "NEW");
  EXPECT_EQ(again.topic, "NEW");
  EXPECT_EQ(again.kind, wire::PayloadKind::Opaque);
  EXPECT_FALSE(ChannelTable::on_update(again, 1).gap);
  EXPECT_EQ(table.size(), 1u);
}

// A SNAPSHOT's CHANNEL frame, sent for a channel the connection already
// streams, must not cost it gap detection.
TEST(ChannelTable, TheSameChannelIntroducedAgainKeepsItsBaseline) {
  ChannelTable table;
  ChannelRecord& ch = table.introduce(4, wire::PayloadKind::FieldList, "A/B");
  table.on_image(ch, 10);
  ChannelRecord& again = table.introduce(4, wire::PayloadKind::FieldList, "A/B");
  EXPECT_EQ(&again, &ch);
  EXPECT_TRUE(again.has_seq);
  EXPECT_TRUE(table.on_update(again, 12).gap) << "seq 11 was lost: still detected";
}

TEST(ChannelTable, ImageAfterGapResetsBaseline) {
  ChannelTable table;
  ChannelRecord& ch = table.introduce(2, wire::PayloadKind::FieldList, "A");
  ChannelTable::on_image(ch, 10);
  ChannelTable::on_image(ch, 20);
  EXPECT_FALSE(ChannelTable::on_update(ch, 21).gap);
}

}  // namespace
}  // namespace tw::client
