// Issue 17, items 4 and 5: the CLI's usage errors and first connect, what
// `tickwire channels` lists (live channels only, true state and provider),
// provider balancing in every thread configuration, and log lines that say
// what happened.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>

#include "integration/it_providers_support.h"

namespace tw::it {
namespace {

using testing::bin_path;
using testing::InteractiveTimeouts;
using testing::Process;
using testing::ProviderClient;
using testing::run_to_completion;

testing::RunResult tickwire(std::vector<std::string> args, uint16_t port = 0) {
  if (port != 0) args.insert(args.begin(), {"-s", "127.0.0.1:" + std::to_string(port)});
  return run_to_completion(bin_path("tickwire"), args);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Waits until the broker's stderr holds `text` (its log lines arrive as it works).
bool wait_for_log(BrokerProcess& broker, const std::string& text) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(testing::kDefaultTimeoutMs);
  while (!contains(broker.err(), text)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

TEST(It22Cli, UnknownSubcommandIsNamedWithASuggestion) {
  auto stats = tickwire({"stats"});
  EXPECT_EQ(stats.status.code, 2);
  EXPECT_TRUE(contains(stats.err, "tickwire: unknown subcommand 'stats'")) << stats.err;
  EXPECT_FALSE(contains(stats.err, "A subcommand is required")) << stats.err;
  auto typo = tickwire({"chanels"});
  EXPECT_EQ(typo.status.code, 2);
  EXPECT_TRUE(contains(typo.err, "unknown subcommand 'chanels' (did you mean 'channels'?)")) << typo.err;
  auto nested = tickwire({"perf", "runn"});
  EXPECT_TRUE(contains(nested.err, "tickwire perf: unknown subcommand 'runn' (did you mean 'run'?)")) << nested.err;
}

TEST(It22Cli, CountZeroSaysTheRule) {
  auto r = tickwire({"pub", "-n", "0", "CLI/A", "-f", "BID=1"});
  EXPECT_EQ(r.status.code, 2);
  EXPECT_TRUE(contains(r.err, "--count: must be more than 0, got '0'")) << r.err;
  EXPECT_FALSE(contains(r.err, "1797693")) << "no 300-digit range: " << r.err;
}

TEST(It22Cli, SnapshotOfAPatternSaysItIsAPattern) {
  auto r = tickwire({"snapshot", "Q/>"});
  EXPECT_EQ(r.status.code, 2);
  EXPECT_TRUE(contains(r.err, "'Q/>' is a pattern")) << r.err;
  EXPECT_FALSE(contains(r.err, "published")) << r.err;
}

TEST(It22Cli, ChannelsOfAPatternIsRefusedNotAnEmptyListing) {
  BrokerProcess broker;
  ASSERT_TRUE(broker.ready()) << broker.err();
  auto r = tickwire({"channels", "Q/>"}, broker.port());
  EXPECT_EQ(r.status.code, 2);
  EXPECT_TRUE(contains(r.err, "'Q/>' is not a service")) << r.err;
  EXPECT_FALSE(contains(r.out, "no channels")) << r.out;
  auto empty = tickwire({"channels", "Q"}, broker.port());
  EXPECT_TRUE(empty.status.clean()) << empty.err;
  EXPECT_EQ(empty.out, "no channels in service Q\n");
}

// A subscriber started before its broker waits for it.
TEST(It22Cli, SubRetriesItsFirstConnect) {
  const uint16_t port = testing::pick_free_port();
  Process sub(bin_path("tickwire"), {"-s", "127.0.0.1:" + std::to_string(port), "sub", "EARLY/>", "--count", "1"});
  ASSERT_TRUE(sub.started());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(testing::kDefaultTimeoutMs);
  while (!contains(sub.err(), "retrying in") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(contains(sub.err(), "retrying in")) << sub.err();
  ASSERT_TRUE(sub.alive()) << "sub gave up: " << sub.err();
  BrokerProcess broker({.port = port});
  ASSERT_TRUE(broker.ready()) << broker.err();
  // The subscription reaches the broker once sub connects; publish until its image arrives.
  for (int i = 0; i < 50 && !contains(sub.out(), "EARLY/A"); ++i) {
    auto pub = tickwire({"pub", "EARLY/A", "-f", "BID=1"}, port);
    ASSERT_TRUE(pub.status.clean()) << pub.err;
    sub.wait_for_out("EARLY/A", 200);
  }
  auto status = sub.wait(testing::kDefaultTimeoutMs);
  ASSERT_TRUE(status) << "sub did not get its message: " << sub.err();
  EXPECT_TRUE(status->clean()) << sub.err();
  EXPECT_TRUE(contains(sub.out(), "EARLY/A")) << sub.out();
}

std::vector<testing::ChannelInfoRow> listed(RawClient& client, const std::string& service) {
  static uint32_t request_id = 500;
  auto reply = client.list_channels(++request_id, service);
  EXPECT_TRUE(reply.ack && reply.ack->code == wire::Code::Ok);
  return reply.rows;
}

const testing::ChannelInfoRow* row_of(const std::vector<testing::ChannelInfoRow>& rows, const std::string& topic) {
  for (const auto& row : rows) {
    if (row.topic == topic) return &row;
  }
  return nullptr;
}

// A wildcard observer keeps watching released and NOT_FOUND topics; the
// listing shows neither as an OK broadcast channel.
TEST(It22Channels, ReleasedAndNotFoundTopicsAreNotListed) {
  InteractiveTimeouts t;
  t.release_linger_ms = 100;
  BrokerProcess broker({.args = testing::interactive_args(t)});
  ASSERT_TRUE(broker.ready()) << broker.err();
  ProviderClient p;
  open_provider(p, broker.port(), "p");
  RawClient watcher, sub;
  open_subscriber(watcher, broker.port(), "watcher");
  subscribe_ok(watcher, 1, "SVC/>");
  open_subscriber(sub, broker.port(), "sub");
  subscribe_ok(sub, 1, "SVC/A");
  subscribe_ok(sub, 2, "SVC/NF");
  ASSERT_TRUE(p.read_requests(2));
  for (const auto& request : p.requests()) {
    const bool sent = request.topic == "SVC/A" ? p.answer(request.stream_id) : p.not_found(request.stream_id);
    ASSERT_TRUE(sent) << request.topic;
  }
  StreamModel model;
  ASSERT_TRUE(testing::collect_until(sub, model, [&] {
    return model.find("SVC/A") && model.find("SVC/A")->has_image && model.find("SVC/NF") &&
           model.find("SVC/NF")->closed_statuses > 0;
  }));
  auto rows = listed(watcher, "SVC");
  ASSERT_NE(row_of(rows, "SVC/A"), nullptr) << "served: listed";
  EXPECT_EQ(row_of(rows, "SVC/A")->provider.substr(0, 2), "p@");
  EXPECT_EQ(row_of(rows, "SVC/NF"), nullptr) << "NOT_FOUND: not a channel";

  auto ack = sub.unsubscribe(3, "SVC/A");
  ASSERT_TRUE(ack && ack->code == wire::Code::Ok);
  auto release = p.next_event();
  ASSERT_TRUE(release && !release->is_request()) << "no RELEASE after release_linger_ms";
  rows = listed(watcher, "SVC");
  EXPECT_TRUE(rows.empty()) << "released and NOT_FOUND topics are listed: " << rows.front().topic;
  auto cli = tickwire({"channels", "SVC"}, broker.port());
  EXPECT_EQ(cli.out, "no channels in service SVC\n") << cli.err;
}

// A channel whose provider went away is STALE with no provider: the CLI does
// not count it as broadcast.
TEST(It22Channels, OrphanedChannelIsStaleWithNoProvider) {
  BrokerProcess broker({.args = testing::interactive_args()});
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient sub;
  StreamModel model;
  {
    ProviderClient p;
    open_provider(p, broker.port(), "p");
    open_subscriber(sub, broker.port(), "sub");
    subscribe_ok(sub, 1, "SVC/B");
    ASSERT_TRUE(p.read_requests(1));
    ASSERT_TRUE(p.answer_all());
    ASSERT_TRUE(testing::collect_until(sub, model, [&] { return model.find("SVC/B") && model.find("SVC/B")->has_image; }));
  }  // the provider disconnects
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return model.find("SVC/B")->stale_statuses > 0; }));
  auto rows = listed(sub, "SVC");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].state, wire::ChannelState::Stale);
  EXPECT_EQ(rows[0].provider, "");
  auto cli = tickwire({"channels", "SVC"}, broker.port());
  EXPECT_TRUE(contains(cli.out, "STALE  (no provider)")) << cli.out;
  EXPECT_TRUE(contains(cli.out, "(no provider): 1 channel")) << cli.out;
  EXPECT_FALSE(contains(cli.out, "broadcast")) << cli.out;
}

// Subscribes `topic` exactly and has whichever provider was asked answer it,
// before the caller makes the next request.
void open_served(RawClient& sub, uint32_t request_id, const std::string& topic, std::vector<ProviderClient*> providers,
                 StreamModel& model) {
  subscribe_ok(sub, request_id, topic);
  bool answered = false;
  for (int tries = 0; tries < 400 && !answered; ++tries) {
    for (ProviderClient* p : providers) {
      auto event = answered ? std::nullopt : p->next_event(5);
      if (event && event->is_request()) {
        ASSERT_TRUE(p->answer(event->stream_id));
        answered = true;
      }
    }
  }
  ASSERT_TRUE(answered) << "no provider was asked for " << topic;
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return model.find(topic) && model.find(topic)->has_image; }));
}

// Gateways of this run: each owns the channels whose id - 1 is its index modulo their count.
uint32_t gateway_count() {
  const char* threads = std::getenv("TW_TEST_THREADS");
  return threads && std::string(threads) == "2+2" ? 2 : 1;
}

// 8 channels over 2 providers end 4/4 whether one loop or several gateways
// own them. The channels are chosen so that one gateway owns 5 and the other
// 3, the split where per-gateway counting gave 5/3.
void expect_four_and_four(const std::vector<std::string>& balance_args) {
  std::vector<std::string> args = testing::interactive_args();
  args.insert(args.end(), balance_args.begin(), balance_args.end());
  BrokerProcess broker({.args = args});
  ASSERT_TRUE(broker.ready()) << broker.err();
  ProviderClient p1, p2;
  // Every gateway lists p1 before p2 (a listing passes through each gateway
  // after the PROVIDE sent before it), so ties go to p1 everywhere: without
  // shared counts the gateway owning 5 gives p1 3 and the one owning 3 gives it 2.
  for (ProviderClient* p : {&p1, &p2}) {
    open_provider(*p, broker.port(), p == &p1 ? "p1" : "p2");
    ASSERT_TRUE(p->raw().list_channels(2, "SVC").ack);
  }
  RawClient sub;
  open_subscriber(sub, broker.port(), "sub");
  StreamModel model;
  // Learn which gateway owns which topic, then release them all.
  constexpr int kProbes = 24;
  for (int i = 0; i < kProbes; ++i) open_served(sub, 100 + i, "SVC/T" + std::to_string(i), {&p1, &p2}, model);
  std::vector<std::vector<std::string>> by_gateway(gateway_count());
  for (const auto& row : listed(sub, "SVC")) by_gateway[(row.channel_id - 1) % gateway_count()].push_back(row.topic);
  for (int i = 0; i < kProbes; ++i) ASSERT_TRUE(sub.unsubscribe(200 + i, "SVC/T" + std::to_string(i)));
  size_t releases = 0;
  for (int tries = 0; tries < 400 && releases < kProbes; ++tries) {
    for (ProviderClient* p : {&p1, &p2}) {
      if (auto event = p->next_event(5); event && !event->is_request()) ++releases;
    }
  }
  ASSERT_EQ(releases, static_cast<size_t>(kProbes));
  ASSERT_TRUE(listed(sub, "SVC").empty());

  std::vector<std::string> chosen;
  const std::vector<size_t> wanted = gateway_count() == 1 ? std::vector<size_t>{8} : std::vector<size_t>{5, 3};
  for (size_t g = 0; g < wanted.size(); ++g) {
    ASSERT_GE(by_gateway[g].size(), wanted[g]) << "too few probe topics on gateway " << g;
    chosen.insert(chosen.end(), by_gateway[g].begin(), by_gateway[g].begin() + static_cast<long>(wanted[g]));
  }
  for (size_t i = 0; i < chosen.size(); ++i) {
    open_served(sub, 300 + static_cast<uint32_t>(i), chosen[i], {&p1, &p2}, model);
  }
  std::map<std::string, int> per_provider;
  for (const auto& row : listed(sub, "SVC")) ++per_provider[row.provider.substr(0, row.provider.find('@'))];
  EXPECT_EQ(per_provider["p1"], 4);
  EXPECT_EQ(per_provider["p2"], 4);
}

TEST(It22Channels, LeastLoadedBalancesAlikeInEveryThreadConfiguration) { expect_four_and_four({}); }

TEST(It22Channels, RoundRobinBalancesAlikeInEveryThreadConfiguration) {
  expect_four_and_four({"--provider-balance", "round-robin"});
}

// Thread counts in words, and pinning announced as an attempt, before the
// warning of a cpu that cannot be had (cpus 1020-1023 exist on no test machine).
TEST(It22Logs, ThreadsAndPinningSayWhatHappened) {
  BrokerProcess broker({.args = {"--cpus", "1020-1023"}, .log_level = "info"});
  ASSERT_TRUE(broker.ready()) << broker.err();
  // Each loop thread logs its own warning, in no set order: wait for the first cpu's.
  ASSERT_TRUE(wait_for_log(broker, "cannot pin thread to cpu 1020")) << broker.err();
  const std::string log = broker.err();
  EXPECT_TRUE(contains(log, "pinning loop threads: cpus 1020,1021,1022,1023")) << log;
  EXPECT_FALSE(contains(log, "threads pinned")) << log;
  EXPECT_TRUE(contains(log, "cannot pin thread to cpu 1020")) << log;
  const char* threads = std::getenv("TW_TEST_THREADS");
  const std::string config = threads ? threads : "";
  if (config == "1+1") {
    EXPECT_TRUE(contains(log, "threads: 1 gateway, 1 access point\n")) << log;
  } else if (config == "2+2") {
    EXPECT_TRUE(contains(log, "threads: 2 gateways, 2 access points\n")) << log;
  }
}

}  // namespace
}  // namespace tw::it
