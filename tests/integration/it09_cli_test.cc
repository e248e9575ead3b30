// The tickwire command-line client against a real broker.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "integration/it_support.h"

namespace tw::it {
namespace {

using testing::bin_path;
using testing::Process;
using testing::run_to_completion;

class Cli : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(broker.ready()) << broker.err(); }
  std::vector<std::string> with_server(std::vector<std::string> args) const {
    args.insert(args.begin(), {"-s", "127.0.0.1:" + std::to_string(broker.port())});
    return args;
  }
  void pub(const std::string& topic, const std::string& field) {
    auto r = run_to_completion(bin_path("tickwire"), with_server({"pub", topic, "-f", field}));
    ASSERT_FALSE(r.timed_out);
    ASSERT_TRUE(r.status.clean()) << testing::describe(r.status) << ": " << r.err;
  }
  BrokerProcess broker;
};

// The value of the field whose name ends with `id` ("#9001" or "9001").
std::optional<nlohmann::json> field_by_id(const nlohmann::json& line, const std::string& id) {
  if (!line.contains("fields")) return std::nullopt;
  for (auto& [name, value] : line["fields"].items()) {
    if (name.size() >= id.size() && name.compare(name.size() - id.size(), id.size(), id) == 0) return value;
  }
  return std::nullopt;
}

TEST_F(Cli, PubThenSubCountJsonThenSnapshot) {
  ASSERT_NO_FATAL_FAILURE(pub("CLI/A", "9001:int=1"));
  Process sub(bin_path("tickwire"), with_server({"sub", "CLI/>", "--count", "3", "--json"}));
  ASSERT_TRUE(sub.started());
  ASSERT_TRUE(sub.wait_for_out("\n", testing::kDefaultTimeoutMs)) << "no image printed: " << sub.err();
  ASSERT_NO_FATAL_FAILURE(pub("CLI/A", "9001:int=2"));
  ASSERT_NO_FATAL_FAILURE(pub("CLI/A", "9001:int=3"));
  auto status = sub.wait(testing::kDefaultTimeoutMs);
  ASSERT_TRUE(status) << "sub --count 3 did not exit; output so far:\n" << sub.out();
  EXPECT_TRUE(status->clean()) << testing::describe(*status) << ": " << sub.err();

  std::istringstream lines(sub.out());
  std::string text;
  std::vector<nlohmann::json> parsed;
  while (std::getline(lines, text)) {
    if (text.empty()) continue;
    auto j = nlohmann::json::parse(text, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "not JSON: " << text;
    parsed.push_back(j);
  }
  ASSERT_EQ(parsed.size(), 3u) << sub.out();
  for (size_t i = 0; i < parsed.size(); ++i) {
    EXPECT_EQ(parsed[i]["topic"], "CLI/A");
    EXPECT_EQ(parsed[i]["type"], i == 0 ? "image" : "update");
    EXPECT_EQ(parsed[i]["seq"], i + 1);
    auto v = field_by_id(parsed[i], "9001");
    ASSERT_TRUE(v) << parsed[i].dump();
    EXPECT_EQ(*v, static_cast<int>(i + 1));
  }

  auto snap = run_to_completion(bin_path("tickwire"), with_server({"snapshot", "CLI/A", "--json"}));
  ASSERT_FALSE(snap.timed_out);
  EXPECT_TRUE(snap.status.clean()) << snap.err;
  auto j = nlohmann::json::parse(snap.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << snap.out;
  EXPECT_EQ(j["topic"], "CLI/A");
  EXPECT_EQ(j["seq"], 3);
  EXPECT_EQ(field_by_id(j, "9001"), nlohmann::json(3));
}

// MQTT's wildcards are refused with the native one to use, never taken
// literally in silence; a NATS-style dotted name gets a note and goes on.
TEST_F(Cli, ForeignWildcardsAreRefusedWithAHint) {
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"sub", "DEMO/#"}, {"sub", "DEMO/+/AAPL"}, {"snapshot", "#"}, {"pub", "DEMO/+", "-f", "BID=1"}}) {
    auto r = run_to_completion(bin_path("tickwire"), with_server(args));
    ASSERT_FALSE(r.timed_out) << args[1] << " was taken literally";
    EXPECT_EQ(r.status.code, 2) << args[1];
    const char* hint = args[1].find('#') != std::string::npos ? "Tickwire's is '>'" : "Tickwire's is '*'";
    EXPECT_NE(r.err.find(hint), std::string::npos) << r.err;
  }
  auto dotted = run_to_completion(bin_path("tickwire"), with_server({"snapshot", "DEMO.EQ.AAPL"}));
  EXPECT_EQ(dotted.status.code, 1);  // not found, as asked
  EXPECT_NE(dotted.err.find("'DEMO.EQ.AAPL' is one level: Tickwire separates levels with '/' (DEMO/EQ/AAPL)"),
            std::string::npos)
      << dotted.err;
}

TEST_F(Cli, SnapshotOfUnknownTopicSaysNotFound) {
  auto r = run_to_completion(bin_path("tickwire"), with_server({"snapshot", "CLI/NONE"}));
  ASSERT_FALSE(r.timed_out);
  EXPECT_TRUE(r.status.exited);
  EXPECT_NE(r.status.code, 0);
  EXPECT_NE(r.out.find("not found"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace tw::it
