// Issue 28: guaranteed messaging over the native protocol (docs/guaranteed.md).
// Real tickwired processes with a store, libtickwire publishers and
// consumers, and the CLI: publish -> two queues; a consumer that leaves gives
// its messages to another, flagged redelivered; SIGKILL during publishing
// loses nothing acknowledged (an independent checker); a full disk refuses
// with a clear reason while direct messaging goes on.
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "admin/http_client.h"
#include "auth/password.h"
#include "tickwire/client/client.h"
#include "guaranteed_support.h"
#include "it_support.h"
#include "testlib/process.h"

namespace tw::it {
namespace {

using testing::bin_path;
using testing::run_to_completion;
using testing::TempDir;

std::string queues_toml(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& queues,
                        const std::string& extra = "") {
  std::string toml = "[store]\ndir = \"" + dir + "\"\nsegment_bytes = 65536\n" + extra + "\n";
  for (const auto& [name, pattern] : queues) {
    toml += "[[queue]]\nname = \"" + name + "\"\nsubscriptions = [\"" + pattern + "\"]\n";
  }
  return toml;
}

// What one consumer saw of one queue: every delivery, in order.
struct Seen {
  struct Delivery {
    uint64_t id;  // the publisher's message id, carried as the payload
    bool redelivered;
  };
  std::vector<Delivery> deliveries;
  std::set<uint64_t> got;  // the ids delivered, once each
  const std::set<uint64_t>& ids() const { return got; }
  bool has_all(const std::set<uint64_t>& wanted) const {
    return std::includes(got.begin(), got.end(), wanted.begin(), wanted.end());
  }
};

// Binds `client` to `queue`, acknowledging everything and recording it into `seen`.
void consume_into(client::Client& client, const std::string& queue, Seen& seen, uint32_t window = 64) {
  ASSERT_TRUE(client
                  .bind(queue,
                        [&client, &seen](const client::QueueMessage& m) {
                          const uint64_t id = std::stoull(std::string(m.payload.begin(), m.payload.end()));
                          seen.deliveries.push_back({id, m.redelivered});
                          seen.got.insert(id);
                          (void)client.ack(m.bind_id, m.seq);
                        },
                        window)
                  .ok());
}

TEST(It30Guaranteed, PublishedToTwoQueuesAndConsumedFromBoth) {
  TempDir store;
  BrokerProcess broker({.args = {"--http-listen", "127.0.0.1:0"},
                        .config_toml = queues_toml(store.path() + "/q", {{"all", "ORD/>"}, {"eu", "ORD/EU/*"}})});
  ASSERT_TRUE(broker.ready()) << broker.err();
  client::Client pub;
  std::vector<uint64_t> acked;
  pub.on_publish_ack([&](const client::PublishAnswer& a) {
    EXPECT_EQ(a.code, wire::Code::Ok) << a.text;
    acked.push_back(a.message_id);
  });
  ASSERT_TRUE(pub.connect(options_for(broker.port(), "it30-pub")).ok());
  for (int i = 1; i <= 40; ++i) {
    ASSERT_TRUE(pub.publish_guaranteed(i % 2 ? "ORD/EU/X" : "ORD/US/X", bytes_of(std::to_string(i))).ok());
  }
  ASSERT_TRUE(poll_until({&pub}, [&] { return acked.size() == 40; })) << acked.size();

  // The CLI consumes one queue: 40 lines in order; libtickwire the other: the 20 EU ones.
  auto cli = run_to_completion(bin_path("tickwire"), {"-s", "127.0.0.1:" + std::to_string(broker.port()), "consume",
                                                      "all", "-n", "40", "--timeout-ms", "5000"});
  ASSERT_EQ(cli.status.code, 0) << cli.err;
  EXPECT_NE(cli.out.find("all seq=1 ORD/EU/X 1\n"), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find("all seq=40 ORD/US/X 40\n"), std::string::npos) << cli.out;
  client::Client sub;
  Seen eu;
  consume_into(sub, "eu", eu);
  ASSERT_TRUE(sub.connect(options_for(broker.port(), "it30-sub")).ok());
  ASSERT_TRUE(poll_until({&sub}, [&] { return eu.deliveries.size() == 20; })) << eu.deliveries.size();
  for (size_t i = 0; i < 20; ++i) {
    EXPECT_EQ(eu.deliveries[i].id, 2 * i + 1);
    EXPECT_FALSE(eu.deliveries[i].redelivered);
  }
  // Everything was acknowledged: the CLI's queue is empty now.
  auto again = run_to_completion(bin_path("tickwire"), {"-s", "127.0.0.1:" + std::to_string(broker.port()), "consume",
                                                        "all", "-n", "1", "--timeout-ms", "500"});
  EXPECT_EQ(again.status.code, 1) << again.out;
  EXPECT_EQ(again.out, "");

  // /metrics shows the queues (promtool checks the format in it24).
  admin::HttpTarget http;
  http.port = broker.http_port();
  auto metrics = admin::http_request(http, "GET", "/metrics");
  ASSERT_TRUE(metrics.ok() && metrics->status == 200);
  EXPECT_NE(metrics->body.find("tickwire_guaranteed_publishes_total 40\n"), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("tickwire_queue_depth{queue=\"all\"} 0\n"), std::string::npos);
  EXPECT_NE(metrics->body.find("tickwire_queue_oldest_unacked_age_seconds{queue=\"all\"} 0\n"), std::string::npos);
  EXPECT_NE(metrics->body.find("tickwire_queue_acknowledged_total{queue=\"all\"} 40\n"), std::string::npos);
  EXPECT_NE(metrics->body.find("tickwire_queue_enqueued_total{queue=\"eu\"} 20\n"), std::string::npos);
  // The batch sync histogram: cumulative buckets whose +Inf one is the count, every batch that stored the 40.
  auto value_of = [&](const std::string& sample) -> double {
    const size_t at = metrics->body.find("\n" + sample + " ");
    return at == std::string::npos ? -1 : std::stod(metrics->body.substr(at + sample.size() + 2));
  };
  const double synced = value_of("tickwire_store_batch_sync_seconds_count");
  EXPECT_GE(synced, 1) << metrics->body;
  EXPECT_LE(synced, 40) << metrics->body;
  EXPECT_EQ(value_of("tickwire_store_batch_sync_seconds_bucket{le=\"+Inf\"}"), synced) << metrics->body;
  EXPECT_LE(value_of("tickwire_store_batch_sync_seconds_bucket{le=\"0.0001\"}"),
            value_of("tickwire_store_batch_sync_seconds_bucket{le=\"1\"}")) << metrics->body;
  EXPECT_GT(value_of("tickwire_store_batch_sync_seconds_sum"), 0) << metrics->body;
  if (::access("/usr/bin/promtool", X_OK) == 0) {
    const std::string file = store.write("metrics.txt", metrics->body);
    auto check = run_to_completion("/bin/sh", {"-c", "/usr/bin/promtool check metrics < '" + file + "'"});
    EXPECT_TRUE(check.status.clean()) << check.out << check.err;
    EXPECT_EQ(check.out + check.err, "") << "promtool has remarks";
  }

  // The admin API and `tickwire queue list` show them too.
  auto listing = run_to_completion(bin_path("tickwire"),
                                   {"queue", "list", "--http", "127.0.0.1:" + std::to_string(broker.http_port())});
  ASSERT_EQ(listing.status.code, 0) << listing.err;
  EXPECT_NE(listing.out.find("QUEUE "), std::string::npos) << listing.out;
  EXPECT_NE(listing.out.find("ORD/EU/*"), std::string::npos) << listing.out;
  auto json = admin::http_request(http, "GET", "/api/v1/queues");
  ASSERT_TRUE(json.ok() && json->status == 200);
  EXPECT_NE(json->body.find("\"name\":\"all\""), std::string::npos) << json->body;
  EXPECT_NE(json->body.find("\"acknowledged\":40"), std::string::npos) << json->body;

  // `tickwire top` shows each queue's row: name, depth (0: everything was acknowledged), consumers.
  auto top = run_to_completion(bin_path("tickwire"),
                               {"top", "--once", "--http", "127.0.0.1:" + std::to_string(broker.http_port())});
  ASSERT_TRUE(top.status.clean()) << top.err;
  for (const char* name : {"all", "eu"}) {
    const size_t row = top.out.find(std::string("\n") + name + " ");
    ASSERT_NE(row, std::string::npos) << name << " in:\n" << top.out;
    std::istringstream words(top.out.substr(row + 1, top.out.find('\n', row + 1) - row - 1));
    std::string queue, depth;
    words >> queue >> depth;
    EXPECT_EQ(depth, "0") << top.out;
  }
}

TEST(It30Guaranteed, CliPublishesGuaranteedAndReportsRefusals) {
  TempDir store;
  BrokerProcess broker({.config_toml = queues_toml(store.path() + "/q", {{"small", "CLI/>"}}) +
                                       "max_messages = 3\n"});
  ASSERT_TRUE(broker.ready()) << broker.err();
  const std::string server = "127.0.0.1:" + std::to_string(broker.port());
  auto ok = run_to_completion(bin_path("tickwire"), {"-s", server, "pub", "CLI/A", "--guaranteed", "-d", "x", "-n", "3"});
  EXPECT_EQ(ok.status.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("published 3 guaranteed messages to CLI/A: 3 acknowledged, 0 refused"), std::string::npos)
      << ok.out;
  auto full = run_to_completion(bin_path("tickwire"), {"-s", server, "pub", "CLI/A", "--guaranteed", "-d", "y"});
  EXPECT_EQ(full.status.code, 2);
  EXPECT_NE(full.err.find("QUEUE_FULL"), std::string::npos) << full.err;
  EXPECT_NE(full.err.find("max_messages"), std::string::npos) << full.err;
}

TEST(It30Guaranteed, AConsumerThatLeavesGivesItsMessagesToAnotherFlaggedRedelivered) {
  TempDir store;
  BrokerProcess broker({.config_toml = queues_toml(store.path() + "/q", {{"work", "JOB/>"}})});
  ASSERT_TRUE(broker.ready()) << broker.err();
  client::Client pub;
  size_t acked = 0;
  pub.on_publish_ack([&](const client::PublishAnswer& a) { acked += a.code == wire::Code::Ok; });
  ASSERT_TRUE(pub.connect(options_for(broker.port(), "it30-pub")).ok());
  for (int i = 1; i <= 5; ++i) ASSERT_TRUE(pub.publish_guaranteed("JOB/A", bytes_of(std::to_string(i))).ok());
  ASSERT_TRUE(poll_until({&pub}, [&] { return acked == 5; }));

  // The first consumer takes all five and acknowledges none.
  auto first = std::make_unique<client::Client>();
  std::vector<uint64_t> held;
  ASSERT_TRUE(first->bind("work", [&](const client::QueueMessage& m) {
                      EXPECT_FALSE(m.redelivered);
                      held.push_back(m.seq);
                    }, 10).ok());
  ASSERT_TRUE(first->connect(options_for(broker.port(), "it30-first")).ok());
  ASSERT_TRUE(poll_until({first.get()}, [&] { return held.size() == 5; }));
  client::Client second;
  Seen seen;
  consume_into(second, "work", seen);
  ASSERT_TRUE(second.connect(options_for(broker.port(), "it30-second")).ok());
  // Bound beside a consumer whose window holds everything: nothing for it yet.
  ASSERT_FALSE(poll_until({&second, first.get()}, [&] { return !seen.deliveries.empty(); }, 300));
  first.reset();  // disconnects
  ASSERT_TRUE(poll_until({&second}, [&] { return seen.deliveries.size() == 5; })) << seen.deliveries.size();
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(seen.deliveries[i].id, i + 1);
    EXPECT_TRUE(seen.deliveries[i].redelivered) << i;
  }
}

TEST(It30Guaranteed, NackRedeliversAndAnOldClientIsServedAsBefore) {
  TempDir store;
  BrokerProcess broker({.config_toml = queues_toml(store.path() + "/q", {{"work", "JOB/>"}})});
  ASSERT_TRUE(broker.ready()) << broker.err();
  // A version-3 client never sends the new frames, and gets the version-3 WELCOME.
  RawClient old;
  ASSERT_TRUE(old.connect(broker.port()));
  ASSERT_TRUE(old.send_hello("old", 0, 1, 3));
  auto welcome = old.next_message();
  ASSERT_TRUE(welcome);
  auto w = welcome->as<wire::Welcome>();
  ASSERT_TRUE(w);
  EXPECT_EQ(w->version, 3);
  client::Client c;
  size_t acked = 0;
  c.on_publish_ack([&](const client::PublishAnswer& a) { acked += a.code == wire::Code::Ok; });
  std::vector<bool> flags;
  ASSERT_TRUE(c.bind("work", [&](const client::QueueMessage& m) {
                 flags.push_back(m.redelivered);
                 if (!m.redelivered) {
                   (void)c.nack(m.bind_id, m.seq);
                 } else {
                   (void)c.ack(m.bind_id, m.seq);
                 }
               }).ok());
  ASSERT_TRUE(c.connect(options_for(broker.port(), "it30-nack")).ok());
  ASSERT_TRUE(c.publish_guaranteed("JOB/A", bytes_of("1")).ok());
  ASSERT_TRUE(poll_until({&c}, [&] { return flags.size() == 2 && acked == 1; }));
  EXPECT_EQ(flags, (std::vector<bool>{false, true}));
}

// Entitlements (docs/security.md): publishing needs the publish right on the
// topic, binding the consume right on the queue's name.
TEST(It30Guaranteed, PublishAndConsumeNeedTheirRights) {
  TempDir store;
  auto hash = [](const std::string& pw) { return *auth::hash_password(pw, auth::HashCost{1, 1024, 1}); };
  const std::string users = store.write(
      "users.toml", "[users.desk]\npassword = \"" + hash("desk-pw") + "\"\n"
                    "[[users.desk.rule]]\nallow = [\"publish\"]\ntopics = [\"ORD/>\"]\n"
                    "[[users.desk.rule]]\nallow = [\"consume\"]\ntopics = [\"orders\"]\n"
                    "[users.viewer]\npassword = \"" + hash("viewer-pw") + "\"\n"
                    "[[users.viewer.rule]]\nallow = [\"subscribe\"]\ntopics = [\">\"]\n");
  BrokerProcess broker({.config_toml = "auth_file = \"" + users + "\"\n" +
                                       queues_toml(store.path() + "/q", {{"orders", "ORD/>"}})});
  ASSERT_TRUE(broker.ready()) << broker.err();
  auto login = [&](const std::string& user) {
    client::Options o = options_for(broker.port(), "it30-" + user);
    o.user = user;
    o.password = user + "-pw";
    return o;
  };
  client::Client viewer;
  std::vector<wire::Code> refusals;
  viewer.on_error([&](const client::ErrorInfo& e) { refusals.push_back(e.code); });
  viewer.on_publish_ack([&](const client::PublishAnswer& a) { refusals.push_back(a.code); });
  ASSERT_TRUE(viewer.bind("orders", [](const client::QueueMessage&) { ADD_FAILURE() << "delivered"; }).ok());
  ASSERT_TRUE(viewer.connect(login("viewer")).ok());
  ASSERT_TRUE(viewer.publish_guaranteed("ORD/A", bytes_of("1")).ok());
  ASSERT_TRUE(poll_until({&viewer}, [&] { return refusals.size() == 2; }));
  EXPECT_EQ(refusals, (std::vector<wire::Code>{wire::Code::NotAuthorized, wire::Code::NotAuthorized}));

  client::Client desk;
  Seen seen;
  size_t acked = 0;
  desk.on_publish_ack([&](const client::PublishAnswer& a) { acked += a.code == wire::Code::Ok; });
  consume_into(desk, "orders", seen);
  ASSERT_TRUE(desk.connect(login("desk")).ok());
  ASSERT_TRUE(desk.publish_guaranteed("ORD/A", bytes_of("2")).ok());
  ASSERT_TRUE(poll_until({&desk, &viewer}, [&] { return acked == 1 && seen.deliveries.size() == 1; }));
  EXPECT_EQ(seen.deliveries[0].id, 2u);
}

// A torn tail (what a crash in the middle of a write leaves) is cut at the
// last whole record when the broker starts again, and the log says what was cut.
TEST(It30Guaranteed, RecoveryCutsATornTailAndSaysSo) {
  TempDir store;
  const std::string toml = queues_toml(store.path() + "/q", {{"torn", "T/>"}});
  auto broker = std::make_unique<BrokerProcess>(BrokerOptions{.config_toml = toml});
  ASSERT_TRUE(broker->ready()) << broker->err();
  {
    client::Client pub;
    size_t acked = 0;
    pub.on_publish_ack([&](const client::PublishAnswer& a) { acked += a.code == wire::Code::Ok; });
    ASSERT_TRUE(pub.connect(options_for(broker->port(), "it30-torn")).ok());
    for (int i = 1; i <= 3; ++i) ASSERT_TRUE(pub.publish_guaranteed("T/A", bytes_of(std::to_string(i))).ok());
    ASSERT_TRUE(poll_until({&pub}, [&] { return acked == 3; }));
  }
  broker->send_signal(SIGKILL);
  broker->wait(5000);
  {
    std::ofstream segment(store.path() + "/q/torn/00000000000000000001.log", std::ios::app | std::ios::binary);
    segment << std::string("\x40\x00\x00\x00half a record", 17);  // claims 64 bytes, has 17
  }
  broker = std::make_unique<BrokerProcess>(BrokerOptions{.config_toml = toml, .log_level = "info"});
  ASSERT_TRUE(broker->ready()) << broker->err();
  client::Client sub;
  Seen seen;
  consume_into(sub, "torn", seen);
  ASSERT_TRUE(sub.connect(options_for(broker->port(), "it30-torn-sub")).ok());
  ASSERT_TRUE(poll_until({&sub}, [&] { return seen.has_all({1, 2, 3}); }));
  EXPECT_EQ(seen.deliveries.size(), 3u);
  broker->stop();
  EXPECT_NE(broker->err().find("queue torn: recovery cut 17 bytes at offset"), std::string::npos) << broker->err();
  EXPECT_NE(broker->err().find("queue torn: recovered 1 segment, messages 1 to 3"), std::string::npos) << broker->err();
}

// The records of a segment file, walked by their size fields alone (record.h:
// a u32 size first): each one's start offset. Independent of the store's code.
std::vector<uint64_t> record_starts(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<uint64_t> starts;
  for (uint64_t at = 0; at + 4 <= bytes.size();) {
    starts.push_back(at);
    uint32_t size = 0;
    for (int i = 0; i < 4; ++i) size |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + i])) << (8 * i);
    at += size;
  }
  return starts;
}

std::string last_segment(const std::string& dir) {
  std::string last;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".log" && e.path().string() > last) last = e.path().string();
  }
  return last;
}

// Acceptance 1's second test: the last segment of a queue is damaged at a
// random offset, cut short (a torn write) or with one bit flipped (a bad
// sector), and the broker started again. It must keep every message before
// the damaged record, deliver nothing of it or after it, go on appending from
// there, and log exactly what it cut. Seeded: the seed is printed, TW_IT30_SEED
// replays it; TW_IT30_DAMAGE_TRIALS trials (8 by default, as in CI).
TEST(It30Guaranteed, RecoveryFromADamagedLastSegmentKeepsEverythingBeforeTheDamage) {
  int trials = 8;
  if (const char* env = std::getenv("TW_IT30_DAMAGE_TRIALS")) trials = std::max(1, std::atoi(env));
  uint64_t seed = std::random_device{}();
  if (const char* env = std::getenv("TW_IT30_SEED")) seed = std::strtoull(env, nullptr, 10);
  std::printf("[it30] damage trials: %d, TW_IT30_SEED=%llu\n", trials, static_cast<unsigned long long>(seed));
  std::mt19937_64 random(seed);
  TempDir store;
  const std::string toml = queues_toml(store.path() + "/q", {{"dmg", "D/>"}});
  const std::string pad(900, 'p');  // about 70 records to a 64 KiB segment: 150 fill two and part of a third
  {
    BrokerProcess broker({.config_toml = toml});
    ASSERT_TRUE(broker.ready()) << broker.err();
    client::Client pub;
    size_t acked = 0;
    pub.on_publish_ack([&](const client::PublishAnswer& a) { acked += a.code == wire::Code::Ok; });
    ASSERT_TRUE(pub.connect(options_for(broker.port(), "it30-dmg-pub")).ok());
    for (int i = 1; i <= 150; ++i) ASSERT_TRUE(pub.publish_guaranteed("D/A", bytes_of(std::to_string(i) + " " + pad)).ok());
    ASSERT_TRUE(poll_until({&pub}, [&] { return acked == 150; })) << acked;
    broker.send_signal(SIGKILL);
    broker.wait(5000);
  }
  namespace fs = std::filesystem;
  const std::string queue_dir = store.path() + "/q/dmg", pristine = store.path() + "/pristine";
  fs::copy(queue_dir, pristine, fs::copy_options::recursive);

  for (int trial = 0; trial < trials; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial) + " of seed " + std::to_string(seed));
    fs::remove_all(queue_dir);
    fs::copy(pristine, queue_dir, fs::copy_options::recursive);
    const std::string segment = last_segment(queue_dir);
    const uint64_t base = std::stoull(fs::path(segment).stem().string());
    ASSERT_GT(base, 1u) << "the damage must fall after sealed segments";
    const std::vector<uint64_t> starts = record_starts(segment);
    const uint64_t size = fs::file_size(segment);
    const bool truncate = trial % 2 == 0;
    const uint64_t at = random() % size;
    // The damaged record: the last one starting at or before `at`.
    const size_t damaged = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), at) - starts.begin()) - 1;
    uint64_t kept = base - 1 + damaged;  // every record before the damaged one
    std::string cut_line;
    if (truncate) {
      fs::resize_file(segment, at);
      if (at != starts[damaged]) {
        cut_line = "recovery cut " + std::to_string(at - starts[damaged]) + " bytes at offset " +
                   std::to_string(starts[damaged]) + " of the last segment (a torn record)";
      }
    } else {
      std::fstream f(segment, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(static_cast<std::streamoff>(at));
      char c = 0;
      f.read(&c, 1);
      c = static_cast<char>(c ^ (1 << (random() % 8)));
      f.seekp(static_cast<std::streamoff>(at));
      f.write(&c, 1);
      cut_line = "recovery cut " + std::to_string(size - starts[damaged]) + " bytes at offset " +
                 std::to_string(starts[damaged]) + " of the last segment (";
    }
    std::printf("[it30] trial %d: %s at offset %llu of %llu of segment %llu: keeps messages 1 to %llu\n", trial,
                truncate ? "cut short" : "a bit flipped", static_cast<unsigned long long>(at),
                static_cast<unsigned long long>(size), static_cast<unsigned long long>(base),
                static_cast<unsigned long long>(kept));

    BrokerProcess broker({.config_toml = toml, .log_level = "info"});
    ASSERT_TRUE(broker.ready()) << broker.err();
    client::Client c;
    Seen seen;
    size_t acked = 0;
    c.on_publish_ack([&](const client::PublishAnswer& a) { acked += a.code == wire::Code::Ok; });
    consume_into(c, "dmg", seen);
    ASSERT_TRUE(c.connect(options_for(broker.port(), "it30-dmg")).ok());
    ASSERT_TRUE(poll_until({&c}, [&] { return seen.deliveries.size() >= kept; })) << seen.deliveries.size();
    // A marker published now is the next message: nothing of the damaged record or after it came back.
    ASSERT_TRUE(c.publish_guaranteed("D/A", bytes_of("1000000")).ok());
    ASSERT_TRUE(poll_until({&c}, [&] { return acked == 1 && seen.got.count(1000000); }));
    ASSERT_EQ(seen.deliveries.size(), kept + 1);
    for (uint64_t i = 0; i < kept; ++i) ASSERT_EQ(seen.deliveries[i].id, i + 1) << "lost or out of order";
    broker.stop();
    EXPECT_NE(broker.err().find("queue dmg: recovered"), std::string::npos) << broker.err();
    EXPECT_NE(broker.err().find("messages 1 to " + std::to_string(kept) + "\n"), std::string::npos) << broker.err();
    if (cut_line.empty()) {
      EXPECT_EQ(broker.err().find("recovery cut"), std::string::npos) << broker.err();
    } else {
      EXPECT_NE(broker.err().find("queue dmg: " + cut_line), std::string::npos) << broker.err();
    }
  }
}

// Queues at runtime (docs/guaranteed.md): `tickwire queue create/browse/purge/delete`
// through the admin API; a created queue attracts publishes at once and is
// there again after a restart, a deleted one is not; the configuration's own
// queues cannot be deleted or created twice.
TEST(It30Guaranteed, QueuesCreatedBrowsedPurgedAndDeletedAtRuntimeAndKeptAcrossRestart) {
  TempDir store;
  const std::string toml = queues_toml(store.path() + "/q", {{"fixed", "FIX/>"}});
  auto broker = std::make_unique<BrokerProcess>(BrokerOptions{.args = {"--http-listen", "127.0.0.1:0"}, .config_toml = toml});
  ASSERT_TRUE(broker->ready()) << broker->err();
  auto cli = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"queue"});
    args.insert(args.begin() + 2, {"--http", "127.0.0.1:" + std::to_string(broker->http_port())});
    return run_to_completion(bin_path("tickwire"), args);
  };
  auto created = cli({"create", "rt", "-t", "RT/>", "--max-messages", "100"});
  ASSERT_EQ(created.status.code, 0) << created.err;
  EXPECT_EQ(created.out, "created queue rt\n");
  auto publish = [&](std::vector<int> ids) {
    client::Client pub;
    size_t acked = 0;
    pub.on_publish_ack([&](const client::PublishAnswer& a) { acked += a.code == wire::Code::Ok; });
    ASSERT_TRUE(pub.connect(options_for(broker->port(), "it30-rt-pub")).ok());
    for (int id : ids) ASSERT_TRUE(pub.publish_guaranteed("RT/A", bytes_of(std::to_string(id))).ok());
    ASSERT_TRUE(poll_until({&pub}, [&] { return acked == ids.size(); }));
  };
  publish({1, 2, 3});
  auto browsed = cli({"browse", "rt"});
  ASSERT_EQ(browsed.status.code, 0) << browsed.err;
  EXPECT_EQ(browsed.out, "rt seq=1 RT/A 1\nrt seq=2 RT/A 2\nrt seq=3 RT/A 3\n");
  auto purged = cli({"purge", "rt"});
  ASSERT_EQ(purged.status.code, 0) << purged.err;
  EXPECT_EQ(purged.out, "purged queue rt: 3 messages\n");
  EXPECT_EQ(cli({"browse", "rt"}).out, "");
  publish({4, 5});

  // The configuration's queue: neither created again nor deleted.
  auto twice = cli({"create", "fixed", "-t", "X/>"});
  EXPECT_NE(twice.status.code, 0);
  EXPECT_NE(twice.err.find("queue fixed exists"), std::string::npos) << twice.err;
  auto fixed = cli({"delete", "fixed"});
  EXPECT_NE(fixed.status.code, 0);
  EXPECT_NE(fixed.err.find("in the configuration"), std::string::npos) << fixed.err;

  // Kept across a restart, with what it held.
  broker->stop();  // before the next one opens the same store
  broker = std::make_unique<BrokerProcess>(BrokerOptions{.args = {"--http-listen", "127.0.0.1:0"}, .config_toml = toml});
  ASSERT_TRUE(broker->ready()) << broker->err();
  auto listed = cli({"list"});
  EXPECT_NE(listed.out.find("RT/>"), std::string::npos) << listed.out;
  auto consumed = run_to_completion(bin_path("tickwire"), {"-s", "127.0.0.1:" + std::to_string(broker->port()), "consume",
                                                           "rt", "-n", "2", "--timeout-ms", "5000"});
  ASSERT_EQ(consumed.status.code, 0) << consumed.err;
  EXPECT_EQ(consumed.out, "rt seq=4 redelivered RT/A 4\nrt seq=5 redelivered RT/A 5\n");  // stored before the restart

  // Deleted (once the consumer's connection has gone: a queue with consumers is refused), and not back after a restart.
  testing::RunResult deleted;
  ASSERT_TRUE(poll_until({}, [&] {
    deleted = cli({"delete", "rt"});
    return deleted.status.code == 0;
  })) << deleted.err;
  EXPECT_EQ(deleted.out, "deleted queue rt\n");
  EXPECT_FALSE(std::filesystem::exists(store.path() + "/q/rt"));
  broker->stop();
  broker = std::make_unique<BrokerProcess>(BrokerOptions{.args = {"--http-listen", "127.0.0.1:0"}, .config_toml = toml});
  ASSERT_TRUE(broker->ready()) << broker->err();
  auto after = cli({"list"});
  EXPECT_EQ(after.out.find("RT/>"), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("FIX/>"), std::string::npos) << after.out;
}

// The queue actions change the broker: admins only when authentication is on.
TEST(It30Guaranteed, QueueActionsAreForAdminsOnly) {
  TempDir store;
  auto hash = [](const std::string& pw) { return *auth::hash_password(pw, auth::HashCost{1, 1024, 1}); };
  const std::string users = store.write(
      "users.toml", "[users.ops]\npassword = \"" + hash("ops-pw") + "\"\nadmin = true\n"
                    "[users.desk]\npassword = \"" + hash("desk-pw") + "\"\n"
                    "[[users.desk.rule]]\nallow = [\"publish\", \"consume\"]\ntopics = [\">\"]\n");
  BrokerProcess broker({.args = {"--http-listen", "127.0.0.1:0"},
                        .config_toml = "auth_file = \"" + users + "\"\n" + queues_toml(store.path() + "/q", {})});
  ASSERT_TRUE(broker.ready()) << broker.err();
  admin::HttpTarget http;
  http.port = broker.http_port();
  http.user = "desk";
  http.password = "desk-pw";
  const std::string body = R"({"subscriptions":["A/>"]})";
  auto refused = admin::http_request(http, "POST", "/api/v1/queues/mine", body, "application/json");
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, 403) << refused->body;
  http.user = "ops";
  http.password = "ops-pw";
  auto created = admin::http_request(http, "POST", "/api/v1/queues/mine", body, "application/json");
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(created->status, 200) << created->body;
  http.user = "desk";
  http.password = "desk-pw";
  for (const auto& [method, path] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/api/v1/queues/mine/messages"}, {"POST", "/api/v1/queues/mine/purge"}, {"DELETE", "/api/v1/queues/mine"}}) {
    auto r = admin::http_request(http, method, path);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 403) << method << " " << path << ": " << r->body;
  }
}

// The checker, independent of the broker: every acknowledged message reached
// every queue at least once; per queue, first deliveries keep the publisher's
// order; a message seen again is flagged redelivered every time after the first.
void check_queue(const std::string& name, const Seen& seen, const std::set<uint64_t>& acked) {
  for (uint64_t id : acked) ASSERT_TRUE(seen.got.count(id)) << name << " lost acknowledged message " << id;
  std::set<uint64_t> before;
  uint64_t last_first = 0;
  for (const auto& d : seen.deliveries) {
    const bool duplicate = !before.insert(d.id).second;
    if (duplicate) {
      EXPECT_TRUE(d.redelivered) << name << ": message " << d.id << " delivered again without the flag";
    } else if (!d.redelivered) {
      EXPECT_GT(d.id, last_first) << name << ": out of order";
      last_first = d.id;
    }
  }
}

// Fan-out 5: every message goes to five queues. The broker is killed with
// SIGKILL at random moments while the publisher and the consumers reconnect on
// their own (TW_IT30_CYCLES cycles; 5 by default, as in CI).
TEST(It30Guaranteed, SigkillDuringPublishingLosesNothingAcknowledged) {
  int cycles = 5;
  if (const char* env = std::getenv("TW_IT30_CYCLES")) cycles = std::max(1, std::atoi(env));
  TempDir store;
  std::vector<std::pair<std::string, std::string>> queues;
  for (int q = 0; q < 5; ++q) queues.push_back({"fan" + std::to_string(q), "GM/>"});
  const std::string toml = queues_toml(store.path() + "/q", queues);
  auto broker = std::make_unique<BrokerProcess>(BrokerOptions{.config_toml = toml});
  ASSERT_TRUE(broker->ready()) << broker->err();
  const uint16_t port = broker->port();

  client::Client pub;
  std::set<uint64_t> acked;
  std::map<uint64_t, uint64_t> payload_of;  // message id -> the number it carries
  pub.on_publish_ack([&](const client::PublishAnswer& a) {
    if (a.code == wire::Code::Ok) acked.insert(payload_of.at(a.message_id));
  });
  ASSERT_TRUE(pub.connect(options_for(port, "it30-kill-pub")).ok());
  std::vector<std::unique_ptr<client::Client>> consumers;
  std::vector<Seen> seen(5);
  for (int q = 0; q < 5; ++q) {
    consumers.push_back(std::make_unique<client::Client>());
    consume_into(*consumers.back(), queues[q].first, seen[q]);
    ASSERT_TRUE(consumers.back()->connect(options_for(port, "it30-kill-sub" + std::to_string(q))).ok());
  }
  std::vector<client::Client*> all = {&pub};
  for (auto& c : consumers) all.push_back(c.get());
  std::mt19937 random(std::random_device{}());
  uint64_t next = 1;
  auto publish_for = [&](int ms) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) {
      if (pub.connected()) {
        auto id = pub.publish_guaranteed("GM/T", bytes_of(std::to_string(next)));
        if (id) payload_of[*id] = next++;
      }
      for (client::Client* c : all) c->poll(0);
    }
  };
  for (int cycle = 0; cycle < cycles; ++cycle) {
    publish_for(std::uniform_int_distribution<int>(100, 400)(random));
    broker->send_signal(SIGKILL);
    broker->wait(5000);
    broker = std::make_unique<BrokerProcess>(BrokerOptions{.port = port, .config_toml = toml});
    ASSERT_TRUE(broker->ready()) << "cycle " << cycle << ": " << broker->err();
  }
  publish_for(200);
  // Drain: the publisher's answers, then every consumer has every acknowledged message.
  ASSERT_TRUE(poll_until(all, [&] { return pub.unanswered_publishes() == 0; }, 30'000));
  ASSERT_TRUE(poll_until(all, [&] {
    return std::all_of(seen.begin(), seen.end(), [&](const Seen& s) { return s.has_all(acked); });
  }, 30'000)) << "acknowledged: " << acked.size();
  ASSERT_GT(acked.size(), 0u);
  size_t deliveries = 0, flagged = 0;
  for (int q = 0; q < 5; ++q) {
    check_queue(queues[q].first, seen[q], acked);
    deliveries += seen[q].deliveries.size();
    for (const auto& d : seen[q].deliveries) flagged += d.redelivered;
  }
  std::printf("[it30] %d SIGKILL cycles: %zu messages acknowledged, %zu deliveries to 5 queues, %zu flagged redelivered\n",
              cycles, acked.size(), deliveries, flagged);
}

// Disk full: the store on a 1 MiB tmpfs. Guaranteed publishes are refused
// with DISK_FULL, direct messaging goes on, nothing acknowledged is lost, and
// publishing resumes once consumers' acknowledgements free whole segments.
TEST(It30Guaranteed, DiskFullRefusesClearlyAndResumesWhenSpaceReturns) {
  TempDir store;
  const std::string mount_point = store.path() + "/small";
  std::filesystem::create_directories(mount_point);
  if (::geteuid() != 0 || ::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=1m") != 0) {
    GTEST_SKIP() << "needs root to mount a size-limited tmpfs";
  }
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{mount_point};
  BrokerProcess broker({.config_toml = queues_toml(mount_point + "/q", {{"big", "DF/>"}})});
  ASSERT_TRUE(broker.ready()) << broker.err();
  client::Client pub;
  std::set<uint64_t> acked;
  std::map<uint64_t, uint64_t> payload_of;
  std::string refusal;
  wire::Code refused_code = wire::Code::Ok;
  pub.on_publish_ack([&](const client::PublishAnswer& a) {
    if (a.code == wire::Code::Ok) {
      acked.insert(payload_of.at(a.message_id));
    } else if (refusal.empty()) {
      refused_code = a.code;
      refusal.assign(a.text);
    }
  });
  ASSERT_TRUE(pub.connect(options_for(broker.port(), "it30-df-pub")).ok());
  const std::string pad(8000, 'p');
  uint64_t next = 1;
  auto publish_one = [&] {
    auto id = pub.publish_guaranteed("DF/T", bytes_of(std::to_string(next) + " " + pad));
    if (id) payload_of[*id] = next++;
  };
  ASSERT_TRUE(poll_until({&pub}, [&] {
    if (pub.unanswered_publishes() < 8) publish_one();
    return !refusal.empty();
  }, 30'000)) << "no refusal after " << acked.size() << " acknowledged";
  EXPECT_EQ(refused_code, wire::Code::DiskFull) << refusal;
  EXPECT_NE(refusal.find("No space left on device"), std::string::npos) << refusal;
  ASSERT_TRUE(poll_until({&pub}, [&] { return pub.unanswered_publishes() == 0; }));

  // Direct messaging goes on.
  client::Client direct;
  int direct_messages = 0;
  ASSERT_TRUE(direct.subscribe("LIVE/>", [&](const client::Message&) { ++direct_messages; }).ok());
  ASSERT_TRUE(direct.connect(options_for(broker.port(), "it30-df-direct")).ok());
  ASSERT_TRUE(poll_until({&direct, &pub}, [&] {
    (void)pub.publish("LIVE/A", bytes_of("x"), true, wire::PayloadKind::Opaque);
    return direct_messages > 0;
  }));

  // Nothing acknowledged is lost: consume it all (the acknowledgements free whole segments).
  client::Client sub;
  Seen seen;
  consume_into(sub, "big", seen);
  ASSERT_TRUE(sub.connect(options_for(broker.port(), "it30-df-sub")).ok());
  ASSERT_TRUE(poll_until({&sub, &pub}, [&] { return seen.has_all(acked); }))
      << seen.deliveries.size() << " of " << acked.size();
  check_queue("big", seen, acked);

  // Space has returned: publishing resumes.
  const size_t before = acked.size();
  ASSERT_TRUE(poll_until({&pub, &sub}, [&] {
    if (pub.unanswered_publishes() == 0) publish_one();
    return acked.size() > before;
  })) << "no acknowledgement after the queue drained";
}

}  // namespace
}  // namespace tw::it
