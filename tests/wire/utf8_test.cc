// UTF-8 validation of client text (wire/utf8.h): what is accepted and refused.
#include <gtest/gtest.h>

#include <string>

#include "wire/utf8.h"

namespace tw::wire {
namespace {

TEST(Utf8, AcceptsAsciiAndEveryWellFormedLength) {
  EXPECT_TRUE(valid_utf8(""));
  EXPECT_TRUE(valid_utf8("NYSE/EQ/IBM and a longer ascii run past eight bytes"));
  EXPECT_TRUE(valid_utf8("caf\xC3\xA9"));                  // U+00E9
  EXPECT_TRUE(valid_utf8("\xE2\x82\xAC 5"));               // U+20AC
  EXPECT_TRUE(valid_utf8("\xF0\x9F\x93\x88 chart"));       // U+1F4C8
  EXPECT_TRUE(valid_utf8("\xED\x9F\xBF"));                 // U+D7FF, just below the surrogates
  EXPECT_TRUE(valid_utf8("\xF4\x8F\xBF\xBF"));             // U+10FFFF, the last code point
  EXPECT_TRUE(valid_utf8("12345678\xC3\xA9" "12345678"));  // a sequence between ASCII words
}

TEST(Utf8, RefusesMalformedSequences) {
  EXPECT_FALSE(valid_utf8("\x80"));                      // a lone continuation byte
  EXPECT_FALSE(valid_utf8("\xC3"));                      // truncated
  EXPECT_FALSE(valid_utf8("abcdefgh\xE2\x82"));          // truncated at the end, after an ASCII word
  EXPECT_FALSE(valid_utf8("\xC0\xAF"));                  // overlong '/'
  EXPECT_FALSE(valid_utf8("\xE0\x80\xAF"));              // overlong, 3 bytes
  EXPECT_FALSE(valid_utf8("\xF0\x80\x80\xAF"));          // overlong, 4 bytes
  EXPECT_FALSE(valid_utf8("\xED\xA0\x80"));              // U+D800, a surrogate
  EXPECT_FALSE(valid_utf8("\xF4\x90\x80\x80"));          // above U+10FFFF
  EXPECT_FALSE(valid_utf8("\xFF"));
  EXPECT_FALSE(valid_utf8("\xC3\x28"));                  // lead without its continuation
}

TEST(Utf8, ChecksEveryTextFieldOfAClientMessage) {
  const std::string bad = "A/\xFF";
  EXPECT_FALSE(valid_text(Hello{1, 1, 0, bad}));
  EXPECT_FALSE(valid_text(Subscribe{1, bad}));
  EXPECT_FALSE(valid_text(Snapshot{1, bad}));
  EXPECT_FALSE(valid_text(Register{1, PayloadKind::FieldList, bad}));
  EXPECT_FALSE(valid_text(Provide{1, "SVC", bad}));
  EXPECT_FALSE(valid_text(Provide{1, bad, ""}));
  EXPECT_FALSE(valid_text(Withdraw{1, bad}));
  EXPECT_FALSE(valid_text(StreamStatus{1, ChannelState::Ok, Code::Ok, bad}));
  EXPECT_FALSE(valid_text(ListChannels{1, bad}));
  EXPECT_TRUE(valid_text(Provide{1, "SVC", "SVC/>"}));
}

}  // namespace
}  // namespace tw::wire
