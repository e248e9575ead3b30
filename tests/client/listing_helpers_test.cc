// Pure parts of `tickwire channels` and `tickwire provider`: the channel
// table, the per-provider distribution, symbol lists, and DemoMarket symbols
// added by name.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "channel_listing.h"
#include "demo_market.h"
#include "market_provider.h"
#include "tickwire/fields/field_list.h"

namespace tw::cli {

namespace {

client::ChannelRow row(std::string topic, std::string provider, uint32_t subscribers = 1) {
  client::ChannelRow r;
  r.topic = std::move(topic);
  r.provider = std::move(provider);
  r.subscribers = subscribers;
  r.seq = 7;
  r.rate = 3;
  return r;
}

TEST(ChannelListing, DistributionCountsPerProviderBusiestFirst) {
  auto d = provider_distribution({row("S/B", "p2@h:2"), row("S/A", "p1@h:1"), row("S/C", "p2@h:2"), row("B/X", "")});
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0], (std::pair<std::string, size_t>{"p2@h:2", 2}));
  EXPECT_EQ(d[1], (std::pair<std::string, size_t>{"(broadcast)", 1}));
  EXPECT_EQ(d[2], (std::pair<std::string, size_t>{"p1@h:1", 1}));
}

// A STALE channel without a provider lost it (broadcast channels are always
// OK): it is neither listed nor counted as broadcast.
TEST(ChannelListing, OrphanedStaleChannelIsNotBroadcast) {
  client::ChannelRow orphan = row("S/O", "");
  orphan.state = wire::ChannelState::Stale;
  auto d = provider_distribution({orphan, row("B/X", "")});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], (std::pair<std::string, size_t>{"(broadcast)", 1}));
  EXPECT_EQ(d[1], (std::pair<std::string, size_t>{"(no provider)", 1}));
  std::string table = format_channel_table({orphan});
  EXPECT_NE(table.find("S/O    STALE  (no provider)"), std::string::npos) << table;
  EXPECT_EQ(table.find("broadcast"), std::string::npos) << table;
}

TEST(ChannelListing, TableHasHeaderSortedRowsAndDistribution) {
  std::string table = format_channel_table({row("S/B", "p2@h:2", 4), row("S/A", "p1@h:1")});
  EXPECT_EQ(table.rfind("TOPIC  STATE  PROVIDER  SUBSCRIBERS  SEQ  RATE/s\n", 0), 0u) << table;
  EXPECT_LT(table.find("S/A"), table.find("S/B"));
  EXPECT_NE(table.find("S/B    OK     p2@h:2    4            7    3\n"), std::string::npos) << table;
  EXPECT_NE(table.find("\np1@h:1: 1 channel\n"), std::string::npos) << table;
}

TEST(ChannelListing, JsonCarriesEveryColumn) {
  auto r = row("S/A", "p1@h:1");
  r.state = wire::ChannelState::Stale;
  std::string json = format_channel_json({r});
  EXPECT_NE(json.find("\"topic\":\"S/A\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"state\":\"STALE\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"providers\":{\"p1@h:1\":1}"), std::string::npos) << json;
}

// Names a broker let through (older brokers did not check UTF-8) must not
// abort the JSON dump (it threw a type error: exit 134) or reach the terminal raw.
TEST(ChannelListing, OddNamesNeitherAbortNorReachTheTerminal) {
  auto bad = row("S/\xFF\xFE", "p\x1b[2J@h:1");
  std::string json;
  ASSERT_NO_THROW(json = format_channel_json({bad, row("S/caf\xC3\xA9", "")}));
  EXPECT_EQ(json.find('\x1b'), std::string::npos) << json;
  EXPECT_NE(json.find("\"topic\":\"S/\\ufffd\\ufffd\""), std::string::npos) << json;
  EXPECT_NE(json.find("S/caf\\u00e9"), std::string::npos) << json;
  std::string table = format_channel_table({bad});
  EXPECT_EQ(table.find('\x1b'), std::string::npos) << table;
  EXPECT_NE(table.find("S/\\xff\\xfe"), std::string::npos) << table;
  EXPECT_NE(table.find("p\\x1b[2J@h:1"), std::string::npos) << table;
}

TEST(DemoMarketSymbols, AddedSymbolGetsAnImageAndUpdates) {
  auto market = DemoMarket::create(fields::Dictionary::builtin(), 0, 1);
  ASSERT_TRUE(market.ok()) << market.error().message;
  size_t i = market->add_symbol("ZZZ");
  EXPECT_EQ(market->symbol(i), "ZZZ");
  std::vector<uint8_t> buf(1024);
  size_t n = market->encode_image(i, buf, 1);
  ASSERT_GT(n, 0u);
  EXPECT_TRUE(fields::validate({buf.data(), n}));
  n = market->next_update_for(i, buf, 2);
  ASSERT_GT(n, 0u);
  EXPECT_TRUE(fields::validate({buf.data(), n}));
}

TEST(SymbolList, NumberMeansSyntheticNames) {
  auto list = parse_symbol_list("3");
  ASSERT_TRUE(list.ok()) << list.error().message;
  EXPECT_EQ(*list, (std::unordered_set<std::string>{"SYM0001", "SYM0002", "SYM0003"}));
}

TEST(SymbolList, FileHasOneSymbolPerLine) {
  std::string path = ::testing::TempDir() + "tickwire_symbols.txt";
  {
    std::ofstream out(path);
    out << "AAPL\n  MSFT \r\n\n# comment\nIBM\n";
  }
  auto list = parse_symbol_list(path);
  std::remove(path.c_str());
  ASSERT_TRUE(list.ok()) << list.error().message;
  EXPECT_EQ(*list, (std::unordered_set<std::string>{"AAPL", "MSFT", "IBM"}));
  EXPECT_FALSE(parse_symbol_list("/no/such/symbols.txt").ok());
}

TEST(SymbolList, SymbolIsTheLastTopicLevel) {
  EXPECT_EQ(symbol_of("SVC/EQ/AAPL"), "AAPL");
  EXPECT_EQ(symbol_of("AAPL"), "AAPL");
}

}  // namespace
}  // namespace tw::cli
