#include "stream/request.h"

#include <gtest/gtest.h>

namespace tw::stream {
namespace {

TEST(StreamRequest, SubscribeWithItsOptions) {
  auto r = parse_request(R"({"op":"subscribe","id":4,"topic":"DEMO/EQ/>","conflate_ms":250,"policy":"drop"})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->op, Op::Subscribe);
  EXPECT_EQ(r->id, 4u);
  EXPECT_EQ(r->topic, "DEMO/EQ/>");
  EXPECT_EQ(r->conflate_ms, 250u);
  EXPECT_EQ(r->policy, wire::SlowPolicy::Drop);
  auto plain = parse_request(R"({"op":"subscribe","topic":"A"})");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->id);
  EXPECT_EQ(plain->conflate_ms, 0u);
  EXPECT_EQ(plain->policy, wire::SlowPolicy::Default);
}

TEST(StreamRequest, UnsubscribeAndLogin) {
  auto u = parse_request(R"({"op":"unsubscribe","topic":"A/>"})");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->op, Op::Unsubscribe);
  auto l = parse_request(R"({"op":"login","user":"alice","password":"pw"})");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->user, "alice");
  EXPECT_EQ(l->password, "pw");
}

TEST(StreamRequest, RefusalsNameWhatIsWrong) {
  const std::pair<const char*, const char*> cases[] = {
      {"[1]", "a message must be one JSON object"},
      {"{", "a message must be one JSON object"},
      {R"({"topic":"A"})", "'op' must be a string"},
      {R"({"op":"list"})", "unknown op 'list' (subscribe, unsubscribe, login)"},
      {R"({"op":"subscribe"})", "'topic' must be a string"},
      {R"({"op":"subscribe","topic":"A","id":-1})", "'id' must be an integer from 0 to 4294967295"},
      {R"({"op":"subscribe","topic":"A","conflate_ms":1.5})", "'conflate_ms' must be an integer from 0 to 3600000"},
      {R"({"op":"subscribe","topic":"A","policy":"block"})",
       "'policy' must be \"conflate\", \"drop\" or \"disconnect\""},
      {R"({"op":"login","user":"a"})", "'password' must be a string"},
  };
  for (const auto& [text, why] : cases) {
    auto r = parse_request(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().message, why) << text;
  }
}

}  // namespace
}  // namespace tw::stream
