#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "topic/topic.h"

namespace tw::topic {
namespace {

const Limits kDefault{};

std::string levels(size_t count) {
  std::string path = "L";
  for (size_t i = 1; i < count; ++i) path += "/L";
  return path;
}

TEST(ValidateTopic, AcceptsOrdinaryTopics) {
  for (std::string_view topic : {"NYSE/EQ/IBM", "DEMO", "A/b-c/d_e.1", "A B/C", "\xc3\xa9t\xc3\xa9/x"}) {
    EXPECT_EQ(validate_topic(topic, kDefault), Error::Ok) << topic;
  }
}

TEST(ValidateTopic, Empty) { EXPECT_EQ(validate_topic("", kDefault), Error::Empty); }

TEST(ValidateTopic, EmptyLevel) {
  for (std::string_view topic : {"/A", "A/", "A//B", "/", "//"}) {
    EXPECT_EQ(validate_topic(topic, kDefault), Error::EmptyLevel) << topic;
  }
}

TEST(ValidateTopic, WildcardInTopic) {
  for (std::string_view topic : {"A/*", "A/>", "*", ">", "*/B", "A/b*", "A/>x", "A/>/B"}) {
    EXPECT_EQ(validate_topic(topic, kDefault), Error::WildcardInTopic) << topic;
  }
}

TEST(ValidateTopic, InvalidCharacter) {
  using namespace std::string_view_literals;
  for (std::string_view topic : {"A\0B"sv, "A/\nB"sv, "\tA"sv, "A\x1f"sv, "A\x7f"sv, "\0"sv}) {
    EXPECT_EQ(validate_topic(topic, kDefault), Error::InvalidCharacter);
  }
}

// Hidden characters (base/unicode.h) anywhere in a level: C1 controls,
// format characters, separators, noncharacters; and bytes that are not UTF-8.
TEST(ValidateTopic, HiddenCharactersAndNonUtf8AreInvalid) {
  for (std::string_view c : {"\xc2\x85", "\xc2\x9b", "\xc2\xad", "\xe2\x80\x8b", "\xe2\x80\x8d", "\xe2\x80\x8f",
                             "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xae", "\xe2\x81\xa0", "\xe2\x81\xa6",
                             "\xef\xbb\xbf", "\xef\xbf\xbe", "\xf3\xa0\x80\x81", "\xf3\xa0\x81\x81", "\xff",
                             "\xc3", "\xed\xa0\x80", "\xc0\xaf"}) {
    for (const std::string& topic : {"NYSE/EQ/I" + std::string(c) + "BM", std::string(c) + "/A", "A/" + std::string(c)}) {
      EXPECT_EQ(validate_topic(topic, kDefault), Error::InvalidCharacter) << topic;
      EXPECT_EQ(validate_pattern(topic, kDefault), Error::InvalidCharacter) << topic;
    }
  }
  for (std::string_view visible : {"NYSE/EQ/\xc3\x89TE", "FX/\xe2\x82\xac", "A/\xc2\xa0", "JP/\xe6\x9d\xb1\xe4\xba\xac",
                                   "X/\xf0\x9f\x98\x80", "A/e\xcc\x81"}) {
    EXPECT_EQ(validate_topic(visible, kDefault), Error::Ok) << visible;
  }
}

TEST(ValidateTopic, LengthLimitIsInclusive) {
  const Limits limits{.max_length = 8, .max_depth = 16};
  EXPECT_EQ(validate_topic("ABCDEFGH", limits), Error::Ok);
  EXPECT_EQ(validate_topic("ABCDEFGHI", limits), Error::TooLong);
  EXPECT_EQ(validate_topic(std::string(kDefault.max_length, 'x'), kDefault), Error::Ok);
  EXPECT_EQ(validate_topic(std::string(kDefault.max_length + 1, 'x'), kDefault), Error::TooLong);
}

TEST(ValidateTopic, DepthLimitIsInclusive) {
  const Limits limits{.max_length = 256, .max_depth = 3};
  EXPECT_EQ(validate_topic("A/B/C", limits), Error::Ok);
  EXPECT_EQ(validate_topic("A/B/C/D", limits), Error::TooDeep);
  EXPECT_EQ(validate_topic(levels(kDefault.max_depth), kDefault), Error::Ok);
  EXPECT_EQ(validate_topic(levels(kDefault.max_depth + 1), kDefault), Error::TooDeep);
}

TEST(ValidatePattern, AcceptsDocumentedPatterns) {
  for (std::string_view pattern :
       {"NYSE/EQ/IBM", "NYSE/*/IBM", "NYSE/>", "*/EQ/>", ">", "*", "*/*", "*/>", "A/b-c"}) {
    EXPECT_EQ(validate_pattern(pattern, kDefault), Error::Ok) << pattern;
  }
}

TEST(ValidatePattern, Empty) { EXPECT_EQ(validate_pattern("", kDefault), Error::Empty); }

TEST(ValidatePattern, EmptyLevel) {
  for (std::string_view pattern : {"A//B", "/A", "A/", "*/", "/>", "/"}) {
    EXPECT_EQ(validate_pattern(pattern, kDefault), Error::EmptyLevel) << pattern;
  }
}

TEST(ValidatePattern, GreaterNotLast) {
  for (std::string_view pattern : {"A/>/B", ">/A", ">/>", ">/*"}) {
    EXPECT_EQ(validate_pattern(pattern, kDefault), Error::GreaterNotLast) << pattern;
  }
}

TEST(ValidatePattern, PartialWildcard) {
  for (std::string_view pattern : {"A/b*", "A/>x", "A/*b", "**", ">>", "*>", "A/x>y/C"}) {
    EXPECT_EQ(validate_pattern(pattern, kDefault), Error::PartialWildcard) << pattern;
  }
}

TEST(ValidatePattern, InvalidCharacter) {
  using namespace std::string_view_literals;
  for (std::string_view pattern : {"A/\0"sv, "*/\r"sv, "A\x01/>"sv}) {
    EXPECT_EQ(validate_pattern(pattern, kDefault), Error::InvalidCharacter);
  }
}

TEST(ValidatePattern, Limits) {
  const Limits limits{.max_length = 5, .max_depth = 2};
  EXPECT_EQ(validate_pattern("*/>", limits), Error::Ok);
  EXPECT_EQ(validate_pattern("*/*/>", limits), Error::TooDeep);
  EXPECT_EQ(validate_pattern("ABCDEF", limits), Error::TooLong);
}

TEST(ValidatePattern, NeverReportsWildcardInTopic) {
  for (std::string_view pattern : {"*", ">", "A/*", "A/>", "A/b*"}) {
    EXPECT_NE(validate_pattern(pattern, kDefault), Error::WildcardInTopic) << pattern;
  }
}

TEST(Describe, EveryErrorHasItsOwnSentence) {
  const Error all[] = {Error::Ok,         Error::Empty,           Error::TooLong,
                       Error::TooDeep,    Error::EmptyLevel,      Error::WildcardInTopic,
                       Error::GreaterNotLast, Error::PartialWildcard, Error::InvalidCharacter};
  for (Error a : all) {
    ASSERT_NE(describe(a), nullptr);
    EXPECT_GT(std::string_view(describe(a)).size(), 10u);
    for (Error b : all) {
      if (a != b) {
        EXPECT_STRNE(describe(a), describe(b));
      }
    }
  }
}

}  // namespace
}  // namespace tw::topic
