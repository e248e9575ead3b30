// Issue 30: the faults of an HA pair that need no store replication, with a
// real etcd (tests/testlib/etcd_server.h) and two tickwired processes.
//   - the primary stopped (SIGSTOP) past its lease, then continued: the
//     backup took over meanwhile; the old primary acknowledges nothing and
//     stands by as the backup;
//   - the primary cut off from etcd and the backup (its own network
//     namespace, its link set down): one primary at a time; it stops
//     acknowledging within its TTL; back on the network, it is the backup;
//   - a bounded loop of failovers (kill -9 the primary, restart it as the
//     backup), timed as a client sees it (bench/ha_failover runs 100).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "tickwire/client/client.h"
#include "ha_support.h"
#include "testlib/etcd_server.h"
#include "testlib/fields.h"

namespace tw::it {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::bin_path;
using testing::EtcdServer;
using testing::Process;
using testing::RunResult;
using testing::run_to_completion;
using testing::TempDir;

int64_t ms_since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// One guaranteed publish by the CLI; `prefix` runs it elsewhere (a namespace).
std::vector<std::string> guaranteed_publish_args(const std::string& server, const std::string& data) {
  return {"-s", server, "pub", "ORD/A", "--guaranteed", "-d", data};
}
RunResult publish_guaranteed(const std::string& server, const std::string& data) {
  return run_to_completion(bin_path("tickwire"), guaranteed_publish_args(server, data));
}
std::span<const uint8_t> bytes_of(const char* s) { return {reinterpret_cast<const uint8_t*>(s), std::strlen(s)}; }
bool acknowledged(const RunResult& r) { return r.status.code == 0 && has(r.out, "1 acknowledged"); }

// The first member is primary (and acknowledging: its first term's grace
// has passed), the second its backup.
class It41HaFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(EtcdServer::installed()) << "etcd-server is not installed (scripts/deps.sh)";
    etcd_ = std::make_unique<EtcdServer>();
    ASSERT_TRUE(etcd_->ok()) << etcd_->log();
    start(0);
    ASSERT_TRUE(eventually(10s, [&] { return hello(ports_[0]).welcome; })) << members_[0]->err();
    start(1);
    ASSERT_TRUE(eventually(10s, [&] { return hello(ports_[1]).text == backup_of(*members_[0]); }))
        << members_[1]->err();
  }

  // Starts member i (again on the port it had, so that a client's list of
  // addresses stays true).
  void start(int i) {
    members_[i].reset();
    BrokerOptions options;
    options.port = ports_[i];
    members_[i] = start_member(etcd_->endpoint(), stores_[i], options);
    ASSERT_TRUE(members_[i]->ready()) << members_[i]->err();
    ports_[i] = members_[i]->port();
  }

  TempDir stores_[2];
  std::unique_ptr<EtcdServer> etcd_;
  uint16_t ports_[2] = {0, 0};
  std::unique_ptr<BrokerProcess> members_[2];
};

// Acceptance 1, "SIGSTOP of the primary past its lease, then SIGCONT" (the
// part without replication). Its fence is its monotonic clock, which runs
// on while it is stopped: the guaranteed publish it reads first on waking
// comes after its lease could have ended, and is not acknowledged.
TEST_F(It41HaFaults, APrimaryStoppedPastItsLeaseAcknowledgesNothingOnWakingAndRejoinsAsBackup) {
  BrokerProcess& old_primary = *members_[0];
  BrokerProcess& backup = *members_[1];
  const std::string server = address(old_primary);
  RunResult ok;
  ASSERT_TRUE(eventually(10s, [&] { return acknowledged(ok = publish_guaranteed(server, "before")); })) << ok.err;

  // A publisher connected before the stop, whose next publish waits in the
  // socket while the broker is stopped: the broker reads it on waking,
  // before its election thread may have asked etcd anything.
  client::Client held;
  client::Options options;
  options.port = old_primary.port();
  options.client_name = "it41-held";
  options.reconnect = false;
  options.close_linger_ms = 0;
  std::vector<std::pair<wire::Code, std::string>> answers;
  held.on_publish_ack([&](const client::PublishAnswer& a) { answers.emplace_back(a.code, std::string(a.text)); });
  bool lost = false;
  held.on_connection([&](client::ConnectionEvent e, std::string_view) {
    if (e == client::ConnectionEvent::Disconnected) lost = true;
  });
  ASSERT_TRUE(held.connect(options));
  auto held_until = [&](auto done) {
    return eventually(15s, [&] {
      held.poll(0);
      return done();
    });
  };
  ASSERT_TRUE(held.publish_guaranteed("ORD/A", bytes_of("held before")));
  ASSERT_TRUE(held_until([&] { return !answers.empty(); }));
  ASSERT_EQ(answers.front().first, wire::Code::Ok) << answers.front().second;
  answers.clear();

  const auto stopped = Clock::now();
  old_primary.send_signal(SIGSTOP);
  ASSERT_TRUE(eventually(15s, [&] { return hello(backup.port()).welcome; })) << backup.err();
  std::printf("SIGSTOP: the backup served %lld ms after the primary stopped (lease %d s)\n",
              static_cast<long long>(ms_since(stopped)), kHaTtl);
  EXPECT_TRUE(has(admin_get(backup, "/api/v1/ha"), "\"role\":\"primary\""));

  // Sent to the stopped primary (its HELLO waits in the kernel's queue), so
  // that the broker handles it as soon as it runs again.
  Process late(bin_path("tickwire"), guaranteed_publish_args(server, "after"));
  ASSERT_TRUE(late.started());
  ASSERT_TRUE(held.publish_guaranteed("ORD/A", bytes_of("held during")));
  ASSERT_TRUE(held.flush());
  old_primary.send_signal(SIGCONT);
  // Answered NOT_PRIMARY, or the connection closed: never OK.
  ASSERT_TRUE(held_until([&] { return !answers.empty() || lost; })) << "the held publisher got no answer";
  for (const auto& [code, text] : answers) EXPECT_NE(code, wire::Code::Ok) << "acknowledged after SIGCONT";
  const std::string seen = answers.empty() ? std::string("closed unanswered")
                                           : wire::code_name(answers.front().first) + (": " + answers.front().second);
  std::printf("after SIGCONT, a publish sent while stopped on a connection from before: %s\n", seen.c_str());
  const auto ended = late.wait(15'000);
  std::printf("after SIGCONT, a guaranteed publish sent while stopped: %s", late.err().c_str());
  ASSERT_TRUE(ended.has_value()) << "the publisher got no answer";
  EXPECT_NE(ended->code, 0) << late.out();
  EXPECT_FALSE(has(late.out(), "1 acknowledged")) << late.out();
  EXPECT_TRUE(has(late.err(), "NOT_PRIMARY")) << late.out() << late.err();

  // Once it has seen the new leader, it refuses clients naming it, says it
  // is the backup, and acknowledges nothing.
  ASSERT_TRUE(eventually(10s, [&] { return hello(old_primary.port()).text == backup_of(backup); }))
      << old_primary.err();
  EXPECT_EQ(hello(old_primary.port()).code, wire::Code::NotPrimary);
  const std::string status = admin_get(old_primary, "/api/v1/ha");
  EXPECT_TRUE(has(status, "\"role\":\"backup\"")) << status;
  EXPECT_TRUE(has(status, "\"acknowledging\":false")) << status;
  const RunResult refused = publish_guaranteed(server, "refused");
  EXPECT_FALSE(acknowledged(refused)) << refused.out;
  EXPECT_TRUE(has(refused.err, "NOT_PRIMARY")) << refused.err;
  ASSERT_TRUE(eventually(10s, [&] { return acknowledged(ok = publish_guaranteed(address(backup), "new")); })) << ok.err;

  // It stands by: when the new primary dies, it takes over.
  backup.send_signal(SIGKILL);
  ASSERT_TRUE(eventually(15s, [&] { return hello(old_primary.port()).welcome; })) << old_primary.err();
  EXPECT_TRUE(has(admin_get(old_primary, "/api/v1/ha"), "\"role\":\"primary\""));
}

// A network namespace joined to this one by a veth pair on a private /30:
// the host's end here, the other end inside. Deleted, with the pair, when
// it goes (a process still inside keeps its namespace alive, so end those first).
class Namespace {
 public:
  static constexpr const char* kIp = "/usr/sbin/ip";

  // Null, with the reason, when it cannot be made here (not root, no netns).
  static std::unique_ptr<Namespace> create(std::string& why) {
    if (geteuid() != 0) {
      why = "network namespaces need root";
      return nullptr;
    }
    auto ns = std::unique_ptr<Namespace>(new Namespace());
    const std::vector<std::vector<std::string>> steps = {
        {"netns", "add", ns->name_},
        {"link", "add", ns->host_if_, "type", "veth", "peer", "name", ns->ns_if_},
        {"link", "set", ns->ns_if_, "netns", ns->name_},
        {"addr", "add", ns->host_ip_ + "/30", "dev", ns->host_if_},
        {"link", "set", ns->host_if_, "up"},
        {"netns", "exec", ns->name_, kIp, "addr", "add", ns->ns_ip_ + "/30", "dev", ns->ns_if_},
        {"netns", "exec", ns->name_, kIp, "link", "set", ns->ns_if_, "up"},
        {"netns", "exec", ns->name_, kIp, "link", "set", "lo", "up"},
    };
    for (const auto& step : steps) {
      if (!ns->ip(step, &why)) return nullptr;
    }
    return ns;
  }
  ~Namespace() {
    (void)ip({"link", "del", host_if_});  // both ends of the pair
    (void)ip({"netns", "del", name_});
  }
  Namespace(const Namespace&) = delete;
  Namespace& operator=(const Namespace&) = delete;

  const std::string& host_ip() const { return host_ip_; }
  const std::string& ns_ip() const { return ns_ip_; }
  std::vector<std::string> exec_prefix() const { return {kIp, "netns", "exec", name_}; }
  // The link down at the host's end: nothing passes either way, while the
  // inside keeps its own addresses (its clients there still reach it).
  bool cut() { return ip({"link", "set", host_if_, "down"}); }
  bool restore() { return ip({"link", "set", host_if_, "up"}); }
  // A program run to its end inside.
  RunResult run(const std::string& path, std::vector<std::string> args) const {
    args.insert(args.begin(), {"netns", "exec", name_, path});
    return run_to_completion(kIp, args);
  }

 private:
  // Names and addresses from this process's id: concurrent tests (the
  // tiered copies of the suite) each get their own.
  Namespace()
      : name_("tw41-" + std::to_string(getpid())),
        host_if_("tw41h" + std::to_string(getpid())),
        ns_if_("tw41n" + std::to_string(getpid())) {
    const unsigned block = (static_cast<unsigned>(getpid()) & 0x3fff) * 4;  // a /30 of 10.213.0.0/16
    const std::string net = "10.213." + std::to_string(block / 256) + ".";
    host_ip_ = net + std::to_string(block % 256 + 1);
    ns_ip_ = net + std::to_string(block % 256 + 2);
  }
  bool ip(const std::vector<std::string>& args, std::string* why = nullptr) const {
    const RunResult r = run_to_completion(kIp, args);
    if (r.status.clean()) return true;
    if (why != nullptr) {
      *why = "ip";
      for (const auto& a : args) *why += " " + a;
      *why += ": " + r.err;
    }
    return false;
  }

  std::string name_, host_if_, ns_if_, host_ip_, ns_ip_;
};

// Acceptance 1, "partition of the primary from etcd and the backup": the
// primary runs in a namespace of its own, etcd and the backup here; its
// link goes down. Its admin listener is on its namespace's loopback, asked
// from inside (`ip netns exec`), as are its guaranteed publishers.
TEST(It41HaPartition, APrimaryCutOffFromEtcdAndTheBackupStopsAcknowledgingAndRejoinsAsBackup) {
  ASSERT_TRUE(EtcdServer::installed()) << "etcd-server is not installed (scripts/deps.sh)";
  std::string why;
  // Declared first: it goes last, after every process inside it.
  std::unique_ptr<Namespace> ns = Namespace::create(why);
  if (!ns) GTEST_SKIP() << "no network namespace: " << why;
  EtcdServer etcd(ns->host_ip());
  ASSERT_TRUE(etcd.ok()) << etcd.log();
  TempDir stores[2];
  BrokerOptions inside;
  inside.host = ns->ns_ip();
  inside.command_prefix = ns->exec_prefix();
  auto cut_one = start_member(etcd.endpoint(), stores[0], inside);
  ASSERT_TRUE(cut_one->ready()) << cut_one->err();
  const std::string cut_address = ns->ns_ip() + ":" + std::to_string(cut_one->port());
  const std::string cut_http = "127.0.0.1:" + std::to_string(cut_one->http_port());
  auto cut_status = [&] {
    const RunResult r = ns->run(bin_path("tickwire"), {"ha", "status", "--json", "--http", cut_http});
    return r.status.clean() ? r.out : "no answer: " + r.err;
  };
  auto publish_inside = [&](const std::string& data) {
    return ns->run(bin_path("tickwire"), guaranteed_publish_args(cut_address, data));
  };
  RunResult ok;
  ASSERT_TRUE(eventually(15s, [&] { return acknowledged(ok = publish_inside("before")); })) << ok.err << cut_one->err();

  auto backup = start_member(etcd.endpoint(), stores[1]);
  ASSERT_TRUE(backup->ready()) << backup->err();
  ASSERT_TRUE(eventually(10s, [&] { return hello(backup->port()).text == backup_of(cut_address); }))
      << backup->err();

  // Both members, sampled: never two primaries, never two acknowledging.
  // The backup first: once it is primary, the cut one's lease had ended in
  // etcd, so by any later answer the cut one's fence had passed.
  std::string last_cut, last_backup;
  auto sample = [&] {
    last_backup = admin_get(*backup, "/api/v1/ha");
    last_cut = cut_status();
    EXPECT_FALSE(has(last_cut, "\"role\":\"primary\"") && has(last_backup, "\"role\":\"primary\""))
        << "two primaries: " << last_cut << " / " << last_backup;
    EXPECT_FALSE(has(last_cut, "\"acknowledging\":true") && has(last_backup, "\"acknowledging\":true"))
        << "two acknowledging: " << last_cut << " / " << last_backup;
  };

  const auto cut = Clock::now();
  ASSERT_TRUE(ns->cut());
  // A TTL after the cut its lease may have ended in etcd: it must have
  // stopped acknowledging before (its fence: TTL - 0.25 s after the last
  // renewal it sent, which was before the cut).
  ASSERT_TRUE(eventually(10s, [&] {
    sample();
    return Clock::now() >= cut + std::chrono::seconds(kHaTtl);
  }));
  const RunResult fenced = publish_inside("fenced");
  EXPECT_EQ(fenced.status.code, 2) << fenced.out << fenced.err;
  EXPECT_TRUE(has(fenced.err, "NOT_PRIMARY")) << fenced.out << fenced.err;
  EXPECT_TRUE(has(cut_status(), "\"acknowledging\":false"));
  ASSERT_TRUE(eventually(15s, [&] {
    sample();
    return has(last_backup, "\"role\":\"primary\"") && hello(backup->port()).welcome;
  })) << last_backup;
  std::printf("partition: the backup served %lld ms after the primary's link went down (lease %d s)\n",
              static_cast<long long>(ms_since(cut)), kHaTtl);
  ASSERT_TRUE(eventually(10s, [&] {
    sample();
    return has(last_backup, "\"acknowledging\":true");
  })) << last_backup;

  // Back on the network: it learns of the new term and is the backup.
  ASSERT_TRUE(ns->restore());
  const std::string leader = "\"leader\":\"" + address(*backup) + "\"";
  ASSERT_TRUE(eventually(15s, [&] {
    sample();
    return has(last_cut, "\"role\":\"backup\"") && has(last_cut, leader) && has(last_cut, "\"serving\":false");
  })) << last_cut << cut_one->err();
  const RunResult refused = publish_inside("refused");
  EXPECT_FALSE(acknowledged(refused)) << refused.out;
  EXPECT_TRUE(has(refused.err, "NOT_PRIMARY")) << refused.err;
  // The members inside go before the namespace.
  cut_one.reset();
}

// Acceptance 1, "a bounded loop of failovers": kill -9 the primary, the
// backup takes over, the killed one comes back as the backup, and again.
// A publisher and a subscriber (libtickwire, given both addresses) follow
// the primary. Each round measures, from the SIGKILL, (a) when the backup
// serves a new client and (b) when the subscriber receives the first
// message the publisher sent after the SIGKILL (so through the new primary).
// TW_HA_FAILOVERS rounds; by default 20 in the single-threaded run (about
// 2.5 s each with the 2 s lease: 50 s), and 3 in the tiered copies of the
// suite (threads_1_1, threads_2_2), which check the same election through
// their access points: 20 there too would triple the time.
TEST_F(It41HaFaults, ABoundedLoopOfFailoversEachServedAndDeliveredOnTheNewPrimary) {
  int rounds = 20;
  if (const char* t = std::getenv("TW_TEST_THREADS"); t != nullptr && *t != '\0') rounds = 3;
  if (const char* n = std::getenv("TW_HA_FAILOVERS"); n != nullptr && *n != '\0') rounds = std::atoi(n);
  ASSERT_GT(rounds, 0);

  client::Options options;
  ASSERT_TRUE(client::parse_server_list(address(*members_[0]) + "," + address(*members_[1]), options));
  options.reconnect_min_ms = 20;
  options.reconnect_max_ms = 100;
  options.close_linger_ms = 0;
  client::Client pub, sub;
  options.client_name = "it41-pub";
  ASSERT_TRUE(pub.connect(options));
  options.client_name = "it41-sub";
  ASSERT_TRUE(sub.connect(options));
  int64_t next = 1;               // the publisher's next value
  int64_t first_after_kill = 0;   // the first value published after this round's SIGKILL
  std::optional<Clock::time_point> delivered_at;
  uint64_t received = 0;
  ASSERT_TRUE(sub.subscribe("HA/>", [&](const client::Message& m) {
    fields::FieldImage image;
    if (!image.replace(m.payload)) return;
    ++received;
    const int64_t value = testing::int_field(image, 1).value_or(0);
    if (first_after_kill != 0 && value >= first_after_kill && !delivered_at) delivered_at = Clock::now();
  }));
  auto topic = pub.advertise("HA/LOOP", wire::PayloadKind::FieldList);
  ASSERT_TRUE(topic);
  // One turn: both clients polled, one message published when connected.
  auto turn = [&] {
    pub.poll(0);
    sub.poll(0);
    if (pub.connected() && pub.publish(*topic, int_payload(next)).ok()) ++next;
    (void)pub.flush();
    std::this_thread::sleep_for(2ms);
  };
  auto turn_until = [&](std::chrono::milliseconds wait, auto done) {
    const auto end = Clock::now() + wait;
    while (Clock::now() < end) {
      turn();
      if (done()) return true;
    }
    return false;
  };
  ASSERT_TRUE(turn_until(10s, [&] { return received > 0; })) << "nothing flows through the first primary";

  std::vector<int64_t> serving_ms, delivered_ms;
  int primary = 0;
  for (int round = 1; round <= rounds; ++round) {
    const int backup = 1 - primary;
    first_after_kill = 0;
    delivered_at.reset();
    const auto killed = Clock::now();
    members_[primary]->send_signal(SIGKILL);
    first_after_kill = next;
    std::optional<int64_t> serving;
    // Asking the backup costs a connection each time: every 20 ms, between turns.
    auto asked = Clock::now() - 1s;
    ASSERT_TRUE(turn_until(20s, [&] {
      if (!serving && Clock::now() - asked >= 20ms) {
        asked = Clock::now();
        if (hello(ports_[backup]).welcome) serving = ms_since(killed);
      }
      return serving && delivered_at;
    })) << "round " << round << ": served " << serving.has_value() << ", delivered " << delivered_at.has_value()
        << "\n" << members_[backup]->err();
    serving_ms.push_back(*serving);
    delivered_ms.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(*delivered_at - killed).count());
    std::printf("round %d: served %lld ms, delivered %lld ms after the SIGKILL\n", round,
                static_cast<long long>(serving_ms.back()), static_cast<long long>(delivered_ms.back()));
    // The killed one back, as the backup of the new primary.
    start(primary);
    ASSERT_TRUE(turn_until(10s, [&] { return hello(ports_[primary]).text == backup_of(*members_[backup]); }))
        << members_[primary]->err();
    primary = backup;
  }
  pub.close();
  sub.close();

  auto summary = [](std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    return "min " + std::to_string(v.front()) + " p50 " + std::to_string(v[v.size() / 2]) + " max " +
           std::to_string(v.back());
  };
  // bench/ha_failover reads these two lines.
  std::printf("ha_failover: %d failovers, lease %d s, served (ms): %s\n", rounds, kHaTtl, summary(serving_ms).c_str());
  std::printf("ha_failover: %d failovers, lease %d s, delivered (ms): %s\n", rounds, kHaTtl,
              summary(delivered_ms).c_str());
}

}  // namespace
}  // namespace tw::it
