// A log line holds client text (names, client ids, topics) escaped: one
// line per call, whatever the text holds.
#include "base/log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace tw::log {
namespace {

// What the calls in `body` wrote to stderr.
template <typename Body>
std::string captured_stderr(Body body) {
  std::fflush(stderr);
  FILE* file = std::tmpfile();
  const int saved = dup(2);
  dup2(fileno(file), 2);
  body();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::string text;
  std::rewind(file);
  for (int c; (c = std::fgetc(file)) != EOF;) text += static_cast<char>(c);
  std::fclose(file);
  return text;
}

TEST(Log, ClientTextCannotForgeALine) {
  const std::string name = "feed\n2026-12-02T00:00:00.000Z ERROR admin logged in\r\x1b[2Jx\xe2\x80\xae" "evil\xc2\x85";
  const std::string out = captured_stderr([&] { TW_WARN("session 1.2.3.4:5: HELLO from '%s'", name.c_str()); });
  ASSERT_EQ(out.find('\n'), out.size() - 1) << out;  // one line
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_EQ(out.find('\r'), std::string::npos);
  EXPECT_NE(out.find("HELLO from 'feed\\x0A2026-12-02T00:00:00.000Z ERROR admin logged in\\x0D\\x1B[2Jx\\u{202E}evil\\u{0085}'"),
            std::string::npos)
      << out;
}

TEST(Log, PlainTextIsUnchanged) {
  const std::string out = captured_stderr([] { TW_WARN("session %s: %d subscriptions, caf\xc3\xa9", "x", 3); });
  EXPECT_NE(out.find("WARN  session x: 3 subscriptions, caf\xc3\xa9\n"), std::string::npos) << out;
}

TEST(Log, BytesThatAreNotUtf8AreShownAsBytes) {
  const std::string out = captured_stderr([] { TW_WARN("id '%s'", "a\xff\xc3" "b\\c"); });
  EXPECT_NE(out.find("id 'a\\xFF\\xC3b\\\\c'"), std::string::npos) << out;
}

}  // namespace
}  // namespace tw::log
