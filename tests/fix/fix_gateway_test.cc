// tickwire-fix as a process, between real FIX engines: jspurefix (npm,
// tests/js/fix, a TypeScript FIX engine nobody here wrote) as the client,
// tickwire-fix-exchange (QuickFIX) as the exchanges, tickwired for the drop
// copies. Each test starts and stops everything it uses, on free ports.
//
// Orders: routed by ExDestination to the right exchange and the reports back,
// cancel, cancel/replace, an unknown destination and a down exchange refused
// with the reason, an exchange's own reject passed through, an unknown
// order's cancel refused; the drop copies on the broker match that FIX
// traffic one for one. Restart: the gateway killed -9 with orders open and
// started again on its stores; the exchange's fills sent meanwhile arrive
// through a resend request, none lost or duplicated (client.js checks
// ExecIDs). Entitlement: a QuickFIX client (our Engine) refused by its
// session's exchanges list. `tickwire top --fix` shows the gateway.
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <condition_variable>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "tickwire/client/client.h"
#include "tickwire/fields/field_list.h"
#include "fix/drop_copy.h"
#include "fix/engine.h"
#include "testlib/broker_process.h"
#include "testlib/process.h"

namespace tw::fix {
namespace {

using testing::BrokerProcess;
using testing::Process;
using testing::TempDir;

constexpr int kWaitMs = 25'000;  // a safety net, never a performance bound
const std::string kNode = "/usr/bin/node";

std::string session_toml(const std::string& name, const std::string& role, const std::string& begin,
                         const std::string& target, uint16_t port, bool store, const std::string& extra = "") {
  return "[[session]]\nname = \"" + name + "\"\nrole = \"" + role + "\"\nbegin_string = \"" + begin +
         "\"\nsender_comp_id = \"GW\"\ntarget_comp_id = \"" + target + "\"\nport = " + std::to_string(port) +
         "\nstore = " + (store ? "true" : "false") + "\nheartbeat_s = 5\n" + extra + "\n";
}

// Subscribes to FIX/> on the broker and keeps every drop copy: (msg type,
// ClOrdID, ExecID), the same key as a transcript line.
class DropCopySink {
 public:
  explicit DropCopySink(uint16_t port) {
    client::Options options;
    options.port = port;
    options.client_name = "fix-test-sink";
    ready_ = client_.connect(options).ok();
    if (!ready_) return;
    ready_ = client_.subscribe("FIX/>", [this](const client::Message& m) { keep(m); }).ok();
    // A round trip after SUBSCRIBE: the single-threaded broker has taken it.
    (void)client_.snapshot("FIX/x/y", 5000);
    thread_ = std::thread([this] {
      while (!stop_) client_.poll(20);
    });
  }
  ~DropCopySink() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  bool ready() const { return ready_; }
  std::multiset<std::string> wait_for(size_t n) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, std::chrono::milliseconds(kWaitMs), [&] { return keys_.size() >= n; });
    return keys_;
  }

 private:
  void keep(const client::Message& m) {
    if (m.kind == client::MessageKind::Status) return;
    std::map<int, std::string> tags;
    fields::for_each(m.payload, [&](uint16_t id, const fields::FieldValue& v) {
      if (id >= kTagBase && v.type != fields::FieldType::Time) tags[id - kTagBase] = std::string(v.s);
    });
    std::lock_guard lock(mutex_);
    keys_.insert(tags[35] + " " + tags[11] + " " + tags[17]);
    changed_.notify_all();
  }

  client::Client client_;
  bool ready_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::multiset<std::string> keys_;
};

class FixGateway : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    deps_ok_ = access(kNode.c_str(), X_OK) == 0 &&
               std::system(("flock /tmp/tickwire-js-fix.lock bash " + std::string(TW_SOURCE_DIR) +
                            "/scripts/js_deps.sh tests/js/fix")
                               .c_str()) == 0;
  }

  void SetUp() override {
    ASSERT_TRUE(deps_ok_) << "node or tests/js/fix's npm packages (scripts/js_deps.sh tests/js/fix) missing";
    client_port_ = testing::pick_free_port();
    xnas_port_ = testing::pick_free_port();
    xlon_port_ = testing::pick_free_port();
    xdown_port_ = testing::pick_free_port();  // nobody listens: the session stays down
  }

  void TearDown() override {
    if (gateway_) gateway_->stop();
    for (auto& sim : sims_) sim->stop();
  }

  std::string config(bool store, uint16_t broker_port) const {
    std::string c = "[gateway]\nmetrics = \"127.0.0.1:0\"\nstore_dir = \"" + dir_.file("store") + "\"\n";
    if (broker_port != 0) c += "broker = \"127.0.0.1:" + std::to_string(broker_port) + "\"\n";
    c += session_toml("client1", "client", "FIX.4.4", "CLIENT1", client_port_, store);
    c += session_toml("client2", "client", "FIX.4.2", "CLIENT2", client_port_, false, "exchanges = [\"xlon\"]");
    c += session_toml("xnas", "exchange", "FIX.4.2", "XNAS", xnas_port_, store);
    c += session_toml("xlon", "exchange", "FIX.4.4", "XLON", xlon_port_, false);
    c += session_toml("xdown", "exchange", "FIX.4.4", "XDOWN", xdown_port_, false);
    for (const char* x : {"XNAS", "XLON", "XDOWN"}) {
      std::string lower = x;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(ch));
      c += std::string("[[route]]\nex_destination = \"") + x + "\"\nexchange = \"" + lower + "\"\n";
    }
    return c;
  }

  void start_sim(const std::string& begin, const std::string& comp_id, uint16_t port, bool store) {
    std::vector<std::string> args{"--port", std::to_string(port), "--session", begin + ":" + comp_id + ":GW",
                                  "--fill-delay-ms", "1500"};
    if (store) args.insert(args.end(), {"--store-dir", dir_.file("sim-" + comp_id)});
    sims_.push_back(std::make_unique<Process>(testing::bin_path("tickwire-fix-exchange"), args));
    ASSERT_TRUE(sims_.back()->wait_for_out("ready", kWaitMs)) << sims_.back()->err();
  }

  // Starts the gateway and waits until `exchanges` are logged on (its /metrics, read with curl).
  void start_gateway(const std::string& config_text, const std::vector<std::string>& exchanges) {
    const std::string path = dir_.write("gateway.toml", config_text);
    const std::string port_file = dir_.file("gateway.port");
    ::unlink(port_file.c_str());
    gateway_ = std::make_unique<Process>(testing::bin_path("tickwire-fix"),
                                         std::vector<std::string>{"--config", path, "--port-file", port_file});
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    for (;;) {
      ASSERT_TRUE(gateway_->alive()) << gateway_->err();
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "gateway not ready: " << gateway_->err();
      std::ifstream in(port_file);
      int port = 0;
      if (in >> port) {
        auto r = testing::run_to_completion("/usr/bin/curl", {"-sf", "http://127.0.0.1:" + std::to_string(port) + "/metrics"});
        size_t up = 0;
        for (const auto& x : exchanges)
          if (r.out.find("session=\"" + x + "\",role=\"exchange\"} 1") != std::string::npos) ++up;
        if (up == exchanges.size()) {
          metrics_port_ = port;
          return;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  std::unique_ptr<Process> start_node(const std::string& mode, const std::string& transcript, bool store) {
    nlohmann::json opts = {{"mode", mode},       {"port", client_port_}, {"sender", "CLIENT1"},
                           {"target", "GW"},     {"transcript", transcript}};
    if (store) opts["store"] = dir_.file("jspurefix-store");
    return std::make_unique<Process>(kNode, std::vector<std::string>{std::string(TW_FIX_JS_DIR) + "/client.js", opts.dump()});
  }

  static std::multiset<std::string> transcript_keys(const std::string& path) {
    std::multiset<std::string> keys;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      auto j = nlohmann::json::parse(line);
      auto tag = [&](const char* t) { return j["tags"].contains(t) ? j["tags"][t].get<std::string>() : ""; };
      keys.insert(j["type"].get<std::string>() + " " + tag("11") + " " + tag("17"));
    }
    return keys;
  }

  static inline bool deps_ok_ = false;
  TempDir dir_;
  uint16_t client_port_ = 0, xnas_port_ = 0, xlon_port_ = 0, xdown_port_ = 0;
  int metrics_port_ = 0;
  std::vector<std::unique_ptr<Process>> sims_;
  std::unique_ptr<Process> gateway_;
};

TEST_F(FixGateway, JspurefixOrdersAreRoutedAndDropCopiesMatchTheFixTraffic) {
  testing::BrokerOptions with_http;
  with_http.args = {"--http-listen", "127.0.0.1:0"};  // for tickwire top
  BrokerProcess broker(with_http);
  ASSERT_TRUE(broker.ready()) << broker.err();
  DropCopySink sink(broker.port());
  ASSERT_TRUE(sink.ready());
  start_sim("FIX.4.2", "XNAS", xnas_port_, false);
  start_sim("FIX.4.4", "XLON", xlon_port_, false);
  start_gateway(config(false, broker.port()), {"xnas", "xlon"});
  const std::string transcript = dir_.file("orders.jsonl");
  auto node = start_node("orders", transcript, false);
  ASSERT_TRUE(node->wait_for_out("ok orders", kWaitMs)) << node->out() << node->err() << gateway_->err();
  node->stop();

  const auto fix = transcript_keys(transcript);
  ASSERT_EQ(fix.size(), 24u);  // 11 sent by the client, 13 received
  const auto copies = sink.wait_for(fix.size());
  EXPECT_EQ(copies, fix);
  auto metrics = testing::run_to_completion("/usr/bin/curl", {"-sf", "http://127.0.0.1:" + std::to_string(metrics_port_) + "/metrics"});
  EXPECT_NE(metrics.out.find("tickwire_fix_refused_total{reason=\"unknown_destination\"} 1"), std::string::npos) << metrics.out;
  EXPECT_NE(metrics.out.find("tickwire_fix_refused_total{reason=\"exchange_down\"} 1"), std::string::npos);
  EXPECT_NE(metrics.out.find("tickwire_fix_routed_total{client=\"client1\",exchange=\"xlon\"} 1"), std::string::npos);
  EXPECT_NE(metrics.out.find("tickwire_fix_drop_copies_published_total 24"), std::string::npos);
  // tickwire top shows the gateway beside the broker (its own endpoint, --fix).
  auto top = testing::run_to_completion(testing::bin_path("tickwire"),
                                        {"top", "--once", "--http", "127.0.0.1:" + std::to_string(broker.http_port()),
                                         "--fix", "127.0.0.1:" + std::to_string(metrics_port_)});
  EXPECT_TRUE(top.status.clean()) << top.err;
  EXPECT_NE(top.out.find("xnas           exchange  up"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("client1 -> xnas"), std::string::npos) << top.out;
}

TEST_F(FixGateway, JspurefixSeesNoOrderOrFillLostOrDuplicatedAcrossAKillAndRestart) {
  start_sim("FIX.4.2", "XNAS", xnas_port_, true);
  start_gateway(config(true, 0), {"xnas"});
  auto node = start_node("restart", dir_.file("restart.jsonl"), true);
  ASSERT_TRUE(node->wait_for_out("kill-gateway", kWaitMs)) << node->out() << node->err();
  gateway_->send_signal(SIGKILL);
  gateway_->wait(kWaitMs);
  // The exchange fills the five open orders while the gateway is dead.
  auto& sim = *sims_.back();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
  while (sim.out().find("delayed-fill client1:S5") == std::string::npos) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << sim.out();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  start_gateway(config(true, 0), {"xnas"});
  ASSERT_TRUE(node->wait_for_out("ok restart", kWaitMs)) << node->out() << node->err() << gateway_->err();
  // The gap the gateway found at its logon was filled by a resend request.
  EXPECT_NE(sim.err().find("ResendRequest"), std::string::npos) << sim.err();
}

// A client of our own on QuickFIX (the Engine boundary, as an initiator).
class Collector : public EngineEvents {
 public:
  void on_logon(const std::string&) override { set(logged_on_, true); }
  void on_logout(const std::string&) override { set(logged_on_, false); }
  Verdict on_message(const std::string&, const FixMessage& m, bool) override {
    std::lock_guard lock(mutex_);
    messages_.push_back(m);
    changed_.notify_all();
    return kAccepted;
  }
  bool wait(const std::function<bool()>& pred) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::milliseconds(kWaitMs), pred);
  }
  bool logged_on_ = false;
  std::vector<FixMessage> messages_;

 private:
  void set(bool& flag, bool value) {
    std::lock_guard lock(mutex_);
    flag = value;
    changed_.notify_all();
  }
  std::mutex mutex_;
  std::condition_variable changed_;
};

TEST_F(FixGateway, QuickFixClientIsRefusedAnExchangeItIsNotEntitledTo) {
  start_sim("FIX.4.2", "XNAS", xnas_port_, false);
  start_sim("FIX.4.4", "XLON", xlon_port_, false);
  start_gateway(config(false, 0), {"xnas", "xlon"});
  Collector events;
  SessionSpec spec{.name = "c2", .role = Role::Initiator, .begin_string = "FIX.4.2", .sender_comp_id = "CLIENT2",
                   .target_comp_id = "GW", .host = "127.0.0.1", .port = client_port_, .reset_on_logon = true};
  auto engine = make_engine({spec}, events);
  std::string why;
  ASSERT_TRUE(engine->start(&why)) << why;
  ASSERT_TRUE(events.wait([&] { return events.logged_on_; })) << gateway_->err();
  auto order = [&](const std::string& id, const std::string& dest) {
    engine->send("c2", FixMessage{"D", {{11, id}, {21, "1"}, {38, "10"}, {40, "1"}, {54, "1"}, {55, "IBM"}, {60, "20260101-00:00:00"}, {100, dest}}});
  };
  order("E1", "XNAS");  // client2 may use xlon only
  order("E2", "XLON");
  ASSERT_TRUE(events.wait([&] { return events.messages_.size() >= 3; }));  // E1 rejected, E2 new and filled
  std::map<std::string, std::vector<FixMessage>> by_id;
  for (const auto& m : events.messages_) by_id[*m.get(11)].push_back(m);
  ASSERT_EQ(by_id["E1"].size(), 1u);
  EXPECT_EQ(*by_id["E1"][0].get(39), "8");
  EXPECT_NE(by_id["E1"][0].get(58)->find("not entitled"), std::string::npos);
  EXPECT_EQ(*by_id["E1"][0].get(20), "0");  // the gateway answers a FIX 4.2 client in FIX 4.2
  ASSERT_EQ(by_id["E2"].size(), 2u);
  EXPECT_EQ(*by_id["E2"][1].get(39), "2");
  EXPECT_EQ(*by_id["E2"][1].get(30), "XLON");
  engine->stop();
}

}  // namespace
}  // namespace tw::fix
