// The gateway's configuration, routing decisions and drop-copy encoding,
// without QuickFIX or sockets (tests/fix/fix_gateway_test.cc runs the
// processes).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tickwire/fields/field_list.h"
#include "fix/drop_copy.h"
#include "fix/gateway_config.h"
#include "fix/router.h"

namespace tw::fix {
namespace {

const char* kConfig = R"(
[gateway]
broker = "127.0.0.1:9400"
store_dir = "/tmp/x"

[[session]]
name = "client1"
role = "client"
begin_string = "FIX.4.4"
sender_comp_id = "GW"
target_comp_id = "C1"
port = 9878
store = true
exchanges = ["xnas"]

[[session]]
name = "client2"
role = "client"
begin_string = "FIX.4.2"
sender_comp_id = "GW"
target_comp_id = "C2"
port = 9878

[[session]]
name = "xnas"
role = "exchange"
begin_string = "FIX.4.2"
sender_comp_id = "GW"
target_comp_id = "XNAS"
port = 9001

[[session]]
name = "xlon"
role = "exchange"
begin_string = "FIX.4.4"
sender_comp_id = "GW"
target_comp_id = "XLON"
port = 9002

[[route]]
ex_destination = "XNAS"
exchange = "xnas"

[[route]]
client = "client2"
symbol = "VOD"
exchange = "xlon"

[[route]]
security_exchange = "XLON"
exchange = "xlon"
)";

GatewayConfig config() {
  auto c = parse_gateway_config(kConfig, "test.toml");
  EXPECT_TRUE(c) << c.error().message;
  return *c;
}

FixMessage order(const std::string& id, std::vector<std::pair<int, std::string>> extra) {
  FixMessage m{"D", {{tag::kClOrdID, id}, {tag::kSymbol, "AAPL"}, {tag::kSide, "1"}, {tag::kOrderQty, "100"}}};
  for (auto& [t, v] : extra) m.set(t, v);
  return m;
}

class FixRouterTest : public ::testing::Test {
 protected:
  GatewayConfig config_ = config();
  std::set<std::string> up_{"xnas", "xlon"};
  Router router_{config_, [this](const std::string& s) { return up_.contains(s); }};
};

TEST(FixConfigTest, ReadsSessionsRoutesAndStores) {
  GatewayConfig c = config();
  ASSERT_EQ(c.sessions.size(), 4u);
  EXPECT_TRUE(c.session("client1")->is_client());
  EXPECT_EQ(c.session("client1")->spec.store_dir, "/tmp/x/client1");
  EXPECT_EQ(c.session("client2")->spec.store_dir, "");
  EXPECT_FALSE(c.session("xnas")->is_client());
  ASSERT_EQ(c.routes.size(), 3u);
  EXPECT_EQ(c.routes[1].client, "client2");
}

// store = true is our LogStore; "file" keeps QuickFIX's FileStore.
TEST(FixConfigTest, StoreIsALogUnlessFileIsAsked) {
  auto store_of = [](const std::string& value) {
    std::string text = kConfig;
    text.replace(text.find("store = true"), 12, "store = " + value);
    return parse_gateway_config(text, "t.toml");
  };
  auto log = store_of("true");
  ASSERT_TRUE(log);
  EXPECT_EQ(log->session("client1")->spec.store_kind, StoreKind::Log);
  EXPECT_EQ(store_of("\"log\"")->session("client1")->spec.store_kind, StoreKind::Log);
  auto file = store_of("\"file\"");
  ASSERT_TRUE(file);
  EXPECT_TRUE(file->session("client1")->store);
  EXPECT_EQ(file->session("client1")->spec.store_kind, StoreKind::File);
  EXPECT_EQ(file->session("client1")->spec.store_dir, "/tmp/x/client1");
  EXPECT_NE(store_of("\"sql\"").error().message.find("expected true, false, \"log\" or \"file\""), std::string::npos);
}

TEST(FixConfigTest, RefusesWhatItCannotUse) {
  auto with = [](const std::string& extra) { return parse_gateway_config(std::string(kConfig) + extra, "t.toml"); };
  EXPECT_NE(with("[[route]]\nexchange = \"nowhere\"\n").error().message.find("no such exchange session"),
            std::string::npos);
  EXPECT_NE(with("[[route]]\nexchange = \"xnas\"\nsymbl = \"A\"\n").error().message.find("unknown key"),
            std::string::npos);
  EXPECT_NE(with("[[session]]\nname = \"a/b\"\nbegin_string = \"FIX.4.4\"\nsender_comp_id = \"A\"\n"
                 "target_comp_id = \"B\"\nport = 1\n")
                .error()
                .message.find("name must be"),
            std::string::npos);
  EXPECT_NE(with("[[session]]\nname = \"c9\"\nbegin_string = \"FIX.5.0\"\nsender_comp_id = \"A\"\n"
                 "target_comp_id = \"B\"\nport = 1\n")
                .error()
                .message.find("begin_string"),
            std::string::npos);
}

TEST_F(FixRouterTest, RoutesByExDestinationAndMapsClOrdID) {
  auto a = router_.on_message("client1", order("A1", {{tag::kExDestination, "XNAS"}}));
  ASSERT_EQ(a.send.size(), 1u);
  EXPECT_EQ(a.send[0].session, "xnas");
  EXPECT_EQ(*a.send[0].message.get(tag::kClOrdID), "client1:A1");
  ASSERT_EQ(a.copies.size(), 1u);
  EXPECT_EQ(a.copies[0].event, "new");
  EXPECT_EQ(*a.copies[0].message.get(tag::kClOrdID), "A1");  // the client's view
}

TEST_F(FixRouterTest, RoutesBySymbolForOneClientAndBySecurityExchange) {
  EXPECT_EQ(router_.on_message("client2", order("B1", {{tag::kSymbol, "VOD"}})).send.at(0).session, "xlon");
  EXPECT_EQ(router_.on_message("client2", order("B2", {{tag::kSecurityExchange, "XLON"}})).send.at(0).session,
            "xlon");
  // client1's VOD order: the symbol rule is client2's only, and no other rule matches.
  auto a = router_.on_message("client1", order("B3", {{tag::kSymbol, "VOD"}}));
  ASSERT_EQ(a.send.size(), 1u);
  EXPECT_EQ(a.send[0].session, "client1");
  EXPECT_EQ(*a.send[0].message.get(tag::kOrdStatus), "8");
  EXPECT_NE(a.send[0].message.get(tag::kText)->find("unknown destination"), std::string::npos);
}

TEST_F(FixRouterTest, RefusesUnentitledAndDownExchangesWithAReason) {
  // client1 may route to xnas only.
  auto a = router_.on_message("client1", order("C1", {{tag::kSecurityExchange, "XLON"}}));
  ASSERT_EQ(a.send.size(), 1u);
  EXPECT_EQ(a.send[0].session, "client1");
  EXPECT_NE(a.send[0].message.get(tag::kText)->find("not entitled"), std::string::npos);
  up_.erase("xnas");
  a = router_.on_message("client2", order("C2", {{tag::kExDestination, "XNAS"}}));
  ASSERT_EQ(a.send.size(), 1u);
  EXPECT_EQ(a.send[0].session, "client2");
  EXPECT_NE(a.send[0].message.get(tag::kText)->find("exchange session down"), std::string::npos);
  EXPECT_EQ(*a.send[0].message.get(tag::kOrdRejReason), "2");
  EXPECT_EQ(*a.send[0].message.get(tag::kExecTransType), "0");  // client2 speaks FIX 4.2
  EXPECT_EQ(router_.counters().refused.at("not_entitled"), 1u);
  EXPECT_EQ(router_.counters().refused.at("exchange_down"), 1u);
}

// A client resends an order (PossDupFlag) when the gateway asked for it
// again after a restart (docs/fix.md, "What a crash can lose"): it may
// have reached the exchange already, so it goes on as a possible resend.
TEST_F(FixRouterTest, OrderTheClientResentGoesOnAsAPossibleResend) {
  auto first = router_.on_message("client1", order("R1", {{tag::kExDestination, "XNAS"}}));
  EXPECT_FALSE(first.send.at(0).message.poss_resend);
  auto again = router_.on_message("client1", order("R1", {{tag::kExDestination, "XNAS"}}), true);
  ASSERT_EQ(again.send.size(), 1u);
  EXPECT_TRUE(again.send[0].message.poss_resend);
  EXPECT_EQ(*again.send[0].message.get(tag::kClOrdID), "client1:R1");
}

TEST_F(FixRouterTest, CancelFollowsTheOrderAndReportsComeBackUnmapped) {
  router_.on_message("client1", order("D1", {{tag::kExDestination, "XNAS"}}));
  FixMessage cancel{"F", {{tag::kClOrdID, "D2"}, {tag::kOrigClOrdID, "D1"}, {tag::kSymbol, "AAPL"}}};
  auto a = router_.on_message("client1", cancel);  // no ExDestination: the order's exchange
  ASSERT_EQ(a.send.size(), 1u);
  EXPECT_EQ(a.send[0].session, "xnas");
  EXPECT_EQ(*a.send[0].message.get(tag::kOrigClOrdID), "client1:D1");
  FixMessage report{"8", {{tag::kClOrdID, "client1:D2"}, {tag::kOrigClOrdID, "client1:D1"}, {tag::kExecType, "4"},
                          {tag::kOrdStatus, "4"}}};
  a = router_.on_message("xnas", report);
  ASSERT_EQ(a.send.size(), 1u);
  EXPECT_EQ(a.send[0].session, "client1");
  EXPECT_EQ(*a.send[0].message.get(tag::kClOrdID), "D2");
  EXPECT_EQ(*a.send[0].message.get(tag::kOrigClOrdID), "D1");
  EXPECT_EQ(router_.open_orders(), 0u);  // canceled: both ids forgotten
  EXPECT_FALSE(a.send[0].message.poss_resend);
  // A report the exchange resent (PossDupFlag) goes on as a possible resend.
  EXPECT_TRUE(router_.on_message("xnas", report, true).send.at(0).message.poss_resend);
  // A cancel of an order nobody knows, without a route: OrderCancelReject.
  a = router_.on_message("client1", FixMessage{"F", {{tag::kClOrdID, "D3"}, {tag::kOrigClOrdID, "ZZ"}}});
  ASSERT_EQ(a.send.size(), 1u);
  EXPECT_EQ(a.send[0].message.msg_type, "9");
  EXPECT_EQ(*a.send[0].message.get(tag::kCxlRejReason), "1");
}

TEST_F(FixRouterTest, ReportsNamingNoClientAreCountedNotForwarded) {
  auto a = router_.on_message("xnas", FixMessage{"8", {{tag::kClOrdID, "nobody:1"}}});
  EXPECT_TRUE(a.send.empty());
  EXPECT_EQ(router_.counters().unroutable_reports, 1u);
  EXPECT_EQ(router_.on_message("xnas", FixMessage{"8", {}}).verdict, tag::kClOrdID);
  EXPECT_EQ(router_.on_message("client1", FixMessage{"AE", {}}).verdict, kUnsupportedType);
}

TEST(FixDropCopyTest, FieldIdsAreTheTagsPlusTheBase) {
  DropCopy copy{"client1", "xnas", "exec", FixMessage{"8", {{11, "A1"}, {17, "E1"}, {58, "héllo"}, {60000, "x"}}}};
  auto payload = encode_drop_copy(copy, 1234);
  ASSERT_TRUE(fields::validate(payload));
  std::map<uint16_t, std::string> got;
  uint64_t time = 0;
  fields::for_each(payload, [&](uint16_t id, const fields::FieldValue& v) {
    if (v.type == fields::FieldType::Time) time = static_cast<uint64_t>(v.i);
    else got[id] = std::string(v.s);
  });
  EXPECT_EQ(time, 1234u);
  EXPECT_EQ(got[kTagBase], "exec");
  EXPECT_EQ(got[kTagBase + 35], "8");
  EXPECT_EQ(got[kTagBase + 11], "A1");
  EXPECT_EQ(got[kTagBase + 17], "E1");
  EXPECT_EQ(got[kTagBase + 58], "héllo");
  EXPECT_EQ(got.size(), 5u);  // tag 60000 has no field id
  EXPECT_EQ(drop_copy_topic("FIX", copy), "FIX/client1/xnas");
}

}  // namespace
}  // namespace tw::fix
