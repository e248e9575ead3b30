// The frame codec: RFC 6455's own examples, every split point, and each rule
// a reader enforces with its close code.
#include "websocket/frame.h"

#include <gtest/gtest.h>

#include <vector>

namespace tw::websocket {
namespace {

const uint8_t kMask[4] = {0x37, 0xfa, 0x21, 0x3d};  // the RFC's section 5.7 example mask

std::vector<uint8_t> bytes(std::string_view s) { return {s.begin(), s.end()}; }

// Feeds everything, collecting data and the final step.
struct Collected {
  std::string data;
  int messages = 0;
  std::vector<Reader::Kind> kinds;
  Reader::Step last;
};

Collected read_all(Reader& reader, std::vector<uint8_t> in, size_t chunk = SIZE_MAX) {
  Collected out;
  std::vector<uint8_t> buffer;
  size_t fed = 0;
  while (true) {
    if (fed < in.size()) {
      size_t n = std::min(chunk, in.size() - fed);
      buffer.insert(buffer.end(), in.begin() + fed, in.begin() + fed + n);
      fed += n;
    }
    size_t pos = 0;
    while (true) {
      Reader::Step s = reader.next({buffer.data() + pos, buffer.size() - pos});
      pos += s.consumed;
      if (s.kind == Reader::Kind::NeedMore) {
        if (s.consumed == 0) break;
        continue;
      }
      out.kinds.push_back(s.kind);
      out.last = s;
      if (s.kind == Reader::Kind::Data) {
        out.data.append(reinterpret_cast<const char*>(s.payload.data()), s.payload.size());
        if (s.message_end) ++out.messages;
      }
      if (s.kind == Reader::Kind::Close || s.kind == Reader::Kind::Error) return out;
    }
    buffer.erase(buffer.begin(), buffer.begin() + pos);
    if (fed == in.size()) return out;
  }
}

TEST(Frame, RfcExamplesEncodeByteExact) {
  // Section 5.7: a single-frame unmasked text message "Hello", and the masked one.
  EXPECT_EQ(encode_frame(Opcode::Text, "Hello"), std::string("\x81\x05Hello", 7));
  EXPECT_EQ(encode_frame(Opcode::Text, "Hello", true, kMask),
            std::string("\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58", 11));
  uint8_t header[kMaxHeaderBytes];
  EXPECT_EQ(encode_header(header, Opcode::Binary, true, 256), 4u);  // 126 + 16-bit length
  EXPECT_EQ(header[1], 126);
  EXPECT_EQ(encode_header(header, Opcode::Binary, true, 65536), 10u);  // 127 + 64-bit length
  EXPECT_EQ(header[1], 127);
}

TEST(Frame, FragmentedMaskedMessageAtEverySplitPoint) {
  std::string stream = encode_frame(Opcode::Binary, "Hel", false, kMask) +
                       encode_frame(Opcode::Ping, "p", true, kMask) +  // control frames may interleave
                       encode_frame(Opcode::Continuation, "lo", true, kMask) +
                       encode_frame(Opcode::Text, "héllo", true, kMask);
  for (size_t chunk = 1; chunk <= stream.size(); ++chunk) {
    Reader reader({Role::Server, 1024});
    Collected c = read_all(reader, bytes(stream), chunk);
    EXPECT_EQ(c.data, "Hellohéllo") << chunk;
    EXPECT_EQ(c.messages, 2) << chunk;
  }
}

Reader::Step error_of(std::string stream, Role role = Role::Server, uint64_t max = 1024) {
  Reader reader({role, max});
  return read_all(reader, bytes(stream)).last;
}

TEST(Frame, EveryRuleHasItsCloseCode) {
  struct Case {
    std::string stream;
    uint16_t code;
  };
  std::string unmasked = encode_frame(Opcode::Binary, "x");
  std::string reserved = encode_frame(Opcode::Binary, "x", true, kMask);
  reserved[0] = static_cast<char>(reserved[0] | 0x40);
  std::string opcode = encode_frame(Opcode::Binary, "x", true, kMask);
  opcode[0] = static_cast<char>(0x83);
  std::string long_form("\x82\xfe\x00\x05", 4);  // 16-bit length for 5 bytes
  long_form += std::string(reinterpret_cast<const char*>(kMask), 4) + "aaaaa";
  const Case cases[] = {
      {unmasked, 1002},
      {reserved, 1002},
      {opcode, 1002},
      {long_form, 1002},
      {encode_frame(Opcode::Ping, std::string(126, 'p'), true, kMask), 1002},
      {encode_frame(Opcode::Ping, "p", false, kMask), 1002},
      {encode_frame(Opcode::Continuation, "x", true, kMask), 1002},
      {encode_frame(Opcode::Binary, "a", false, kMask) + encode_frame(Opcode::Binary, "b", true, kMask), 1002},
      {encode_frame(Opcode::Binary, std::string(1025, 'b'), true, kMask), 1009},
      {encode_frame(Opcode::Binary, std::string(600, 'b'), false, kMask) +
           encode_frame(Opcode::Continuation, std::string(600, 'b'), true, kMask), 1009},
      {encode_frame(Opcode::Text, "\xc3\x28", true, kMask), 1007},
      {encode_frame(Opcode::Close, "x", true, kMask), 1002},
      {encode_frame(Opcode::Close, std::string("\x03\xed", 2), true, kMask), 1002},  // 1005 is never sent
  };
  for (const Case& c : cases) {
    Reader::Step s = error_of(c.stream);
    EXPECT_EQ(s.kind, Reader::Kind::Error) << c.code;
    EXPECT_EQ(s.close_code, c.code) << s.error;
    EXPECT_FALSE(s.error.empty());
  }
  EXPECT_EQ(error_of(encode_frame(Opcode::Binary, "x", true, kMask), Role::Client).close_code, 1002);
}

TEST(Frame, ADataTypeNotTakenIsRefusedAtItsFirstFrame) {
  Reader binary_only({Role::Server, 1024, Opcode::Binary});
  Reader::Step s = read_all(binary_only, bytes(encode_frame(Opcode::Text, "t", false, kMask))).last;
  EXPECT_EQ(s.kind, Reader::Kind::Error);
  EXPECT_EQ(s.close_code, 1003);
  Reader text_only({Role::Server, 1024, Opcode::Text});
  EXPECT_EQ(read_all(text_only, bytes(encode_frame(Opcode::Binary, "b", true, kMask))).last.close_code, 1003);
}

TEST(Frame, CloseCarriesCodeAndReason) {
  Reader reader({Role::Server, 1024});
  Collected c = read_all(reader, bytes(encode_frame(Opcode::Close, close_payload(CloseCode::GoingAway, "bye"), true, kMask)));
  ASSERT_EQ(c.last.kind, Reader::Kind::Close);
  EXPECT_EQ(c.last.close_code, 1001);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(c.last.payload.data()), c.last.payload.size()), "bye");
  // Done: the same close again, consuming nothing.
  uint8_t more[2] = {0x82, 0x80};
  EXPECT_EQ(reader.next({more, 2}).kind, Reader::Kind::Close);
  EXPECT_EQ(close_payload(CloseCode::Normal, std::string(200, 'r')).size(), kMaxControlPayload);
}

}  // namespace
}  // namespace tw::websocket
