#include "wire_test_support.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace tw::wiretest {

using namespace tw::wire;

std::string hex(std::span<const uint8_t> bytes) {
  std::string out;
  char cell[4];
  for (uint8_t b : bytes) {
    std::snprintf(cell, sizeof cell, "%02x", b);
    if (!out.empty()) out += ' ';
    out += cell;
  }
  return out;
}

Bytes from_hex(std::string_view text) {
  Bytes out;
  std::string digits;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    digits += c;
  }
  if (digits.size() % 2 != 0) throw std::invalid_argument("odd number of hex digits");
  for (size_t i = 0; i < digits.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoul(digits.substr(i, 2), nullptr, 16)));
  }
  return out;
}

Bytes encoded(const std::function<size_t(std::span<uint8_t>)>& encode_fn) {
  Bytes scratch(4096);
  size_t n = encode_fn(scratch);
  scratch.resize(n);
  return scratch;
}

Bytes sample_payload() {
  // count=1; id=22 (BID), type=2 (DECIMAL), mantissa=12345 (i64), exponent=-2 (i8)
  return from_hex("01 00  16 00 02  39 30 00 00 00 00 00 00  fe");
}

std::vector<Sample> all_samples() {
  const Bytes payload = sample_payload();
  std::vector<Sample> s;
  auto add = [&](std::string name, MsgType type, Bytes frame, size_t fixed_body, bool rest = false) {
    s.push_back({std::move(name), type, std::move(frame), fixed_body, rest});
  };
  add("HELLO", MsgType::Hello, encoded([](auto o) { return encode(o, Hello{1, 1, 5000, "cli"}); }), 13);
  add("WELCOME", MsgType::Welcome,
      encoded([](auto o) { return encode(o, Welcome{1, 5000, 1u << 20, 1000, "tickwired"}); }), 25);
  add("SUBSCRIBE", MsgType::Subscribe,
      encoded([](auto o) { return encode(o, MsgType::Subscribe, Subscribe{11, "DEMO/>"}); }), 12);
  add("SUBSCRIBE (policy drop)", MsgType::Subscribe,
      encoded([](auto o) { return encode(o, MsgType::Subscribe, Subscribe{14, "DEMO/>", SlowPolicy::Drop}); }), 12);
  add("SUBSCRIBE (conflate 250 ms)", MsgType::Subscribe,
      encoded([](auto o) { return encode(o, MsgType::Subscribe, Subscribe{15, "DEMO/>", SlowPolicy::Default, 250}); }),
      16);
  add("UNSUBSCRIBE", MsgType::Unsubscribe,
      encoded([](auto o) { return encode(o, MsgType::Unsubscribe, Subscribe{12, "DEMO/*/IBM"}); }), 16);
  add("SNAPSHOT", MsgType::Snapshot, encoded([](auto o) { return encode(o, Snapshot{13, "NYSE/EQ/IBM"}); }), 17);
  add("REGISTER", MsgType::Register,
      encoded([](auto o) { return encode(o, Register{7, PayloadKind::Opaque, "NYSE/EQ/IBM"}); }), 18);
  add("PUBLISH", MsgType::Publish, encoded([&](auto o) { return encode(o, Publish{7, false, payload}); }), 4, true);
  add("PUBLISH_IMAGE", MsgType::Publish, encoded([&](auto o) { return encode(o, Publish{8, true, payload}); }), 4,
      true);
  add("HEARTBEAT", MsgType::Heartbeat, encoded([](auto o) { return encode_heartbeat(o); }), 0);
  add("ACK", MsgType::Ack, encoded([](auto o) { return encode(o, Ack{11, Code::InvalidTopic, "bad topic"}); }), 17);
  add("CHANNEL", MsgType::Channel,
      encoded([](auto o) { return encode(o, ChannelIntro{3, PayloadKind::FieldList, "NYSE/EQ/IBM"}); }), 18);
  add("IMAGE", MsgType::Image, encoded([&](auto o) { return encode(o, Image{3, 41, 11, payload}); }), 16, true);
  add("UPDATE", MsgType::Update, encoded([&](auto o) { return encode(o, Update{3, 42, payload}); }), 12, true);
  add("STATUS", MsgType::Status,
      encoded([](auto o) { return encode(o, StatusMsg{3, ChannelState::Stale, Code::NotFound, "provider gone"}); }),
      22);
  add("ERROR", MsgType::Error, encoded([](auto o) { return encode(o, ErrorMsg{Code::HelloExpected, "hello first"}); }),
      15);
  return s;
}

Bytes with_body(const Bytes& frame, const Bytes& body) {
  // Sized up front: GCC 12 at -O3 reports a false -Warray-bounds on vector::insert here.
  Bytes out(kHeaderSize + body.size());
  std::memcpy(out.data(), frame.data(), kHeaderSize);
  if (!body.empty()) std::memcpy(out.data() + kHeaderSize, body.data(), body.size());
  uint32_t length = static_cast<uint32_t>(out.size());
  std::memcpy(out.data(), &length, 4);
  return out;
}

Bytes body_of(const Bytes& frame) { return Bytes(frame.begin() + kHeaderSize, frame.end()); }

Frame split_one(const Bytes& frame) {
  Frame f;
  EXPECT_EQ(split_frame(frame, kDefaultMaxFrame, f), SplitResult::Frame);
  EXPECT_EQ(f.size, frame.size());
  return f;
}

}  // namespace tw::wiretest
