#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tickwire/client/message_format.h"

namespace tw::client {
namespace {

std::vector<uint8_t> quote(int64_t bid_cents, uint16_t unknown_id) {
  std::vector<uint8_t> buf(256);
  fields::FieldListWriter w(buf);
  w.add_decimal(22, {bid_cents, -2});  // BID
  w.add_int(30, 500);                  // BIDSIZE
  w.add_string(unknown_id, "x");
  buf.resize(w.finish());
  return buf;
}

Message update_of(const std::vector<uint8_t>& payload) {
  Message m;
  m.kind = MessageKind::Update;
  m.topic = "DEMO/EQ/AAPL";
  m.channel_id = 7;
  m.seq = 13;
  m.payload = payload;
  return m;
}

TEST(MessageFormat, TextNamesFieldsAndMarksUnknownIds) {
  auto payload = quote(18925, 60000);
  std::string line = format_text(update_of(payload), fields::Dictionary::builtin());
  EXPECT_EQ(line, "UPDATE DEMO/EQ/AAPL seq=13 BID=189.25 BIDSIZE=500 #60000=x");
}

TEST(MessageFormat, ImageAndStatusText) {
  auto payload = quote(100, 60000);
  Message image = update_of(payload);
  image.kind = MessageKind::Image;
  EXPECT_EQ(format_text(image, fields::Dictionary::builtin()).rfind("IMAGE  DEMO/EQ/AAPL seq=13 BID=1.00", 0), 0u);
  Message status;
  status.kind = MessageKind::Status;
  status.topic = "DEMO/EQ/X";
  status.state = wire::ChannelState::Stale;
  status.code = wire::Code::ServerShutdown;
  status.text = "provider gone";
  EXPECT_EQ(format_text(status, fields::Dictionary::builtin()),
            "STATUS DEMO/EQ/X STALE code=SERVER_SHUTDOWN provider gone");
}

TEST(MessageFormat, OpaquePayloadsAsTextOrHex) {
  std::vector<uint8_t> text{'h', 'i'};
  std::vector<uint8_t> binary{0x00, 0xff, 0x10};
  EXPECT_EQ(format_payload(wire::PayloadKind::Opaque, text, fields::Dictionary::builtin()), "data=\"hi\"");
  EXPECT_EQ(format_payload(wire::PayloadKind::Opaque, binary, fields::Dictionary::builtin()), "hex=00ff10");
}

TEST(MessageFormat, TerminalSafeEscapesControlsAndBadBytesOnly) {
  EXPECT_EQ(terminal_safe("DEMO/EQ/AAPL caf\xC3\xA9 \xE2\x82\xAC"), "DEMO/EQ/AAPL caf\xC3\xA9 \xE2\x82\xAC");
  EXPECT_EQ(terminal_safe("\x1b[2J\x1b]0;owned\x07"), "\\x1b[2J\\x1b]0;owned\\x07");  // clear screen, retitle
  EXPECT_EQ(terminal_safe("a\rb\nc\td\x7f"), "a\\x0db\\x0ac\\x09d\\x7f");
  EXPECT_EQ(terminal_safe("\xC2\x9B" "2J"), "\\u{9b}2J");  // C1 CSI
  EXPECT_EQ(terminal_safe("\xFF\xC3"), "\\xff\\xc3");      // not UTF-8
}

TEST(MessageFormat, AValueCannotReachTheTerminalRaw) {
  std::vector<uint8_t> buf(256);
  fields::FieldListWriter w(buf);
  w.add_string(60000, "\x1b[2J");
  buf.resize(w.finish());
  Message m = update_of(buf);
  m.topic = "EVIL/\x1b]0;t\x07";
  const std::string text = format_text(m, fields::Dictionary::builtin());
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text, "UPDATE EVIL/\\x1b]0;t\\x07 seq=13 #60000=\\x1b[2J");
  const std::string json = format_json(m, fields::Dictionary::builtin());
  EXPECT_EQ(json.find('\x1b'), std::string::npos) << json;
  EXPECT_EQ(nlohmann::json::parse(json)["topic"], "EVIL/\x1b]0;t\x07");  // escaped, not lost
}

TEST(MessageFormat, MalformedFieldListIsShownNotHidden) {
  std::vector<uint8_t> junk{5, 0, 1};
  std::string text = format_payload(wire::PayloadKind::FieldList, junk, fields::Dictionary::builtin());
  EXPECT_NE(text.find("malformed"), std::string::npos);
}

TEST(MessageFormat, JsonKeepsDecimalsExactAndFlagsGaps) {
  auto payload = quote(18925, 60000);
  Message m = update_of(payload);
  m.gap = true;
  auto j = nlohmann::json::parse(format_json(m, fields::Dictionary::builtin()));
  EXPECT_EQ(j["type"], "update");
  EXPECT_EQ(j["topic"], "DEMO/EQ/AAPL");
  EXPECT_EQ(j["seq"], 13);
  EXPECT_EQ(j["channel"], 7);
  EXPECT_EQ(j["gap"], true);
  EXPECT_EQ(j["fields"]["BID"], "189.25");
  EXPECT_EQ(j["fields"]["BIDSIZE"], 500);
  EXPECT_EQ(j["fields"]["#60000"], "x");
}

TEST(MessageFormat, JsonStatus) {
  Message status;
  status.kind = MessageKind::Status;
  status.topic = "A/B";
  status.state = wire::ChannelState::Closed;
  status.code = wire::Code::NotFound;
  auto j = nlohmann::json::parse(format_json(status, fields::Dictionary::builtin()));
  EXPECT_EQ(j["type"], "status");
  EXPECT_EQ(j["state"], "CLOSED");
  EXPECT_EQ(j["code"], "NOT_FOUND");
}

}  // namespace
}  // namespace tw::client
