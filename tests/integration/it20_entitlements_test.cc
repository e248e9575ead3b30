// IT20: users, authentication and entitlements (docs/security.md), checked
// on raw frames. One users file: `feed` publishes EQ/> and FX/> and provides
// SVC; `alice` subscribes EQ/> but not EQ/SECRET, and FX/EUR; `viewer`
// subscribes SVC/>; `late` may
// subscribe EQ/> delayed by one second only; `mallory` may publish anything
// except into services; `hog` may create five channels on all its connections
// together. The broker answers failed logins after 100 ms.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "admin/http_client.h"
#include "auth/password.h"
#include "tickwire/fields/field_list.h"
#include "http/basic_auth.h"
#include "it_support.h"
#include "testlib/blocking_socket.h"
#include "testlib/fields.h"

namespace tw::it {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr uint32_t kDelayedChannelBit = 0x4000'0000u;  // docs/protocol.md, "Delay"

std::string hash(const std::string& password) {
  auto h = auth::hash_password(password, auth::HashCost{1, 1024, 1});  // cheap: tests only
  return h ? *h : std::string();
}

std::string users_file(bool with_fx_eur, bool feed_provides = true) {
  std::string t;
  t += "[users.feed]\npassword = \"" + hash("feed-pw") + "\"\n";
  t += "[[users.feed.rule]]\nallow = [\"publish\"]\ntopics = [\"EQ/>\", " +
       std::string(with_fx_eur ? "\"FX/>\"" : "\"FX/GBP\"") + "]\n";
  if (feed_provides) t += "[[users.feed.rule]]\nallow = [\"provide\"]\ntopics = [\"SVC/>\"]\n";
  t += "[users.viewer]\npassword = \"" + hash("viewer-pw") + "\"\n";
  t += "[[users.viewer.rule]]\nallow = [\"subscribe\"]\ntopics = [\"SVC/>\"]\n";
  t += "[users.alice]\npassword = \"" + hash("alice-pw") + "\"\ngroups = [\"equities\"]\n";
  if (with_fx_eur) t += "[[users.alice.rule]]\nallow = [\"subscribe\"]\ntopics = [\"FX/EUR\"]\n";
  t += "[users.late]\npassword = \"" + hash("late-pw") + "\"\n";
  t += "[[users.late.rule]]\nallow = [\"subscribe-delayed\"]\ndelay_s = 1\ntopics = [\"EQ/>\"]\n";
  t += "[users.mallory]\npassword = \"" + hash("mallory-pw") + "\"\n";
  t += "[[users.mallory.rule]]\nallow = [\"publish\"]\ntopics = [\">\"]\n";
  t += "[users.ops]\npassword = \"" + hash("ops-pw") + "\"\nadmin = true\n";
  t += "[users.hog]\npassword = \"" + hash("hog-pw") + "\"\nmax_channels = 5\n";
  t += "[[users.hog.rule]]\nallow = [\"publish\", \"subscribe\"]\ntopics = [\"HOG/>\"]\n";
  t += "[users.herd]\npassword = \"" + hash("herd-pw") + "\"\n";
  t += "[[users.herd.rule]]\nallow = [\"publish\", \"subscribe\"]\ntopics = [\"HOG/>\"]\n";
  t += "[groups.equities]\n";
  t += "[[groups.equities.rule]]\nallow = [\"subscribe\"]\ntopics = [\"EQ/>\"]\n";
  t += "[[groups.equities.rule]]\ndeny = [\"subscribe\"]\ntopics = [\"EQ/SECRET\"]\n";
  return t;
}

// Connects and sends a HELLO as alice with a wrong password, without waiting for the answer.
bool send_wrong_password(RawClient& c, uint16_t port) {
  if (!c.connect(port)) return false;
  wire::Hello m;
  m.client_name = "guess";
  m.credentials = true;
  m.user = "alice";
  m.password = "not-the-password";
  return c.send_encoded([&](std::span<uint8_t> out) { return wire::encode(out, m); });
}

class EntitlementsTest : public ::testing::Test {
 protected:
  void SetUp() override { start({}); }
  // (Re)starts the broker with these extra arguments.
  void start(std::vector<std::string> args) {
    broker_.reset();
    users_ = dir_.write("users.toml", users_file(true));
    BrokerOptions options;
    options.args = std::move(args);
    usage_log_ = dir_.file("usage.log");
    options.config_toml = "auth_file = \"" + users_ + "\"\nauth_failure_delay_ms = 100\nusage_log = \"" + usage_log_ +
                          "\"\nusage_interval_ms = 100\n";
    broker_ = std::make_unique<BrokerProcess>(options);
    ASSERT_TRUE(broker_->ready()) << broker_->err();
  }

  // Connects and logs in; the WELCOME says the version chosen (credentials need 2 or later).
  void login(RawClient& c, const std::string& user) {
    ASSERT_TRUE(c.connect(broker_->port()));
    auto answer = c.login(user, user, user + "-pw");
    ASSERT_TRUE(answer.has_value());
    auto welcome = answer->as<wire::Welcome>();
    ASSERT_TRUE(welcome.has_value()) << describe(*answer);
    EXPECT_EQ(welcome->version, wire::kProtocolVersion);
  }

  testing::TempDir dir_;
  std::string users_;
  std::string usage_log_;
  std::unique_ptr<BrokerProcess> broker_;
};

wire::Code ack_code(const std::optional<testing::AckReply>& ack) { return ack ? ack->code : wire::Code::Ok; }
std::optional<uint64_t> metric(uint16_t http_port, const std::string& sample);

TEST_F(EntitlementsTest, RefusedSubscribeProvideAndPublishCarryTheirCodes) {
  RawClient alice, feed, mallory, alice_pub;
  login(alice, "alice");
  EXPECT_EQ(ack_code(alice.subscribe(1, "FX/GBP")), wire::Code::NotAuthorized);
  EXPECT_EQ(ack_code(alice.subscribe(2, "BOND/>")), wire::Code::NotAuthorized);
  EXPECT_EQ(ack_code(alice.subscribe(3, "EQ/SECRET")), wire::Code::NotAuthorized);
  EXPECT_EQ(ack_code(alice.provide(4, "SVC")), wire::Code::NotAuthorized);
  EXPECT_EQ(ack_code(alice.snapshot(6, "FX/GBP").ack), wire::Code::NotAuthorized);
  // Refusals leave the connection open.
  auto ok = alice.subscribe(5, "EQ/IBM");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->code, wire::Code::Ok);

  login(feed, "feed");
  EXPECT_EQ(ack_code(feed.provide(1, "SVC")), wire::Code::Ok);

  // A subscriber's REGISTER, and a non-provider's REGISTER into a service, are fatal.
  login(alice_pub, "alice");
  ASSERT_TRUE(alice_pub.register_topic(1, wire::PayloadKind::FieldList, "EQ/IBM"));
  EXPECT_EQ(alice_pub.wait_closed_with(), wire::Code::NotAuthorized);
  login(mallory, "mallory");
  ASSERT_TRUE(mallory.register_topic(1, wire::PayloadKind::FieldList, "SVC/X"));
  EXPECT_EQ(mallory.wait_closed_with(), wire::Code::NotProvider);
}

TEST_F(EntitlementsTest, AWildcardSubscriberGetsExactlyItsChannels) {
  RawClient feed, alice;
  login(feed, "feed");
  const std::vector<std::string> before = {"EQ/IBM", "EQ/SECRET", "FX/EUR", "FX/GBP"};
  const std::vector<std::string> after = {"EQ/NEW", "FX/JPY", "FX/EUR/2"};
  uint32_t id = 0;
  for (const auto& topic : before) {
    ASSERT_TRUE(feed.register_topic(++id, wire::PayloadKind::FieldList, topic));
    ASSERT_TRUE(feed.publish(id, int_payload(id)));
  }
  login(alice, "alice");
  ASSERT_EQ(ack_code(alice.subscribe(1, ">")), wire::Code::Ok);
  // Her ACK means every gateway holds the subscription. A fence through
  // every gateway, on topics both may use, after every publish.
  const Fence fence("EQ/FENCE", 100);
  ASSERT_TRUE(fence.register_on(feed));
  StreamModel model;
  for (const auto& topic : after) {
    ASSERT_TRUE(feed.register_topic(++id, wire::PayloadKind::FieldList, topic));
    ASSERT_TRUE(feed.publish(id, int_payload(id)));
  }
  for (uint32_t k = 2; k <= id; ++k) ASSERT_TRUE(feed.publish(k, int_payload(100 + k)));
  ASSERT_TRUE(feed.publish(1, int_payload(101)));
  ASSERT_TRUE(fence.pass(feed, alice, model));
  EXPECT_TRUE(model.errors().empty()) << model.errors().front();  // e.g. an IMAGE of a channel never introduced
  std::set<std::string> introduced;
  std::set<std::string> updated;
  for (const auto& [topic, ch] : model.channels()) {
    if (fence.covers(topic)) continue;
    introduced.insert(topic);
    if (ch.messages() > 0) updated.insert(topic);
  }
  EXPECT_EQ(introduced, (std::set<std::string>{"EQ/IBM", "FX/EUR", "EQ/NEW"}));
  EXPECT_EQ(updated, introduced);
}

TEST_F(EntitlementsTest, ADelayedOnlyUserNeverGetsFresherDataThanItsDelay) {
  RawClient feed, late;
  login(feed, "feed");
  ASSERT_TRUE(feed.register_topic(1, wire::PayloadKind::FieldList, "EQ/IBM"));
  ASSERT_TRUE(feed.publish(1, int_payload(0)));
  std::map<int64_t, SteadyClock::time_point> published_at;
  published_at[0] = SteadyClock::now();
  login(late, "late");
  EXPECT_EQ(ack_code(late.snapshot(2, "EQ/IBM").ack), wire::Code::NotAuthorized);  // the live image
  // A live subscription is turned into one delayed by the user's forced delay.
  ASSERT_EQ(ack_code(late.subscribe(1, "EQ/>")), wire::Code::Ok);
  for (int k = 1; k <= 8; ++k) {
    published_at[k] = SteadyClock::now();
    ASSERT_TRUE(feed.publish(1, int_payload(k)));
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
  }
  int64_t last = -1;
  const auto give_up = SteadyClock::now() + std::chrono::seconds(6);
  while (last < 8 && SteadyClock::now() < give_up) {
    auto f = late.next_message(200);
    if (!f) continue;
    const auto at = SteadyClock::now();
    std::span<const uint8_t> payload;
    uint32_t channel = 0;
    if (auto c = f->as<wire::ChannelIntro>()) {
      EXPECT_NE(c->channel_id & kDelayedChannelBit, 0u) << "a live channel for a delayed-only user";
      continue;
    }
    if (auto st = f->as<wire::StatusMsg>(); st && st->code == wire::Code::DelayHistory) {
      EXPECT_NE(st->channel_id & kDelayedChannelBit, 0u);
      continue;  // the delayed stream starts a delay after the subscription (docs/protocol.md, "Delay")
    }
    if (auto i = f->as<wire::Image>()) {
      payload = i->payload;
      channel = i->channel_id;
    } else if (auto u = f->as<wire::Update>()) {
      payload = u->payload;
      channel = u->channel_id;
    } else {
      FAIL() << "unexpected " << describe(*f);
    }
    EXPECT_NE(channel & kDelayedChannelBit, 0u);
    fields::for_each(payload, [&](uint16_t fid, const fields::FieldValue& v) {
      if (fid != 1) return;
      last = v.i;
      EXPECT_GE(at, published_at[v.i] + std::chrono::seconds(1)) << "value " << v.i << " came early";
    });
  }
  EXPECT_EQ(last, 8);
}

TEST_F(EntitlementsTest, AWrongPasswordIsRefusedCountedAndLoggedSparingly) {
  constexpr int kTries = 12;
  std::vector<RawClient> tries(kTries);
  for (auto& c : tries) ASSERT_TRUE(send_wrong_password(c, broker_->port()));
  for (auto& c : tries) EXPECT_EQ(c.wait_closed_with(), wire::Code::AuthFailed);
  // Without credentials, where anonymous connections are not allowed.
  RawClient anonymous;
  ASSERT_TRUE(anonymous.connect(broker_->port()));
  ASSERT_TRUE(anonymous.send_hello("anon", 0, 1, 1));
  EXPECT_EQ(anonymous.wait_closed_with(), wire::Code::AuthFailed);
  // The right password still works, and no password reached the log.
  RawClient alice;
  login(alice, "alice");
  const std::string log = broker_->err();
  size_t lines = 0;
  for (size_t at = log.find("failed login for user"); at != std::string::npos; at = log.find("failed login for user", at + 1)) ++lines;
  EXPECT_GE(lines, 1u);
  EXPECT_LE(lines, 5u) << log;  // rate-limited: 5 lines a second
  EXPECT_EQ(log.find("not-the-password"), std::string::npos);
}

// A storm of failed logins from one client (1,000 connections in about a
// second, each with a wrong password) beside a publisher and a subscriber
// already logged in: every update reaches the subscriber, in order, during
// the storm; each guess is refused with AUTH_FAILED; the log stays short.
// (What the storm costs the subscriber's latency is a benchmark:
// bench/login_storm, docs/benchmarks.md.)
TEST_F(EntitlementsTest, AThousandFailedLoginsASecondLeaveOtherSubscribersWhole) {
  RawClient feed, alice;
  login(feed, "feed");
  login(alice, "alice");
  ASSERT_TRUE(feed.register_topic(1, wire::PayloadKind::FieldList, "EQ/STORM"));
  ASSERT_TRUE(alice.subscribe(1, "EQ/STORM").has_value());
  testing::StreamModel model;
  int64_t published = 0;
  auto one_more_arrives = [&] {
    if (!feed.publish(1, testing::field_list({{1, published++}}))) return false;
    return testing::collect_until(alice, model, [&] { return model.messages_on("EQ/STORM") == uint64_t(published); });
  };
  ASSERT_TRUE(one_more_arrives());

  constexpr int kGuesses = 1000, kBatch = 50;  // 20 batches, one each 50 ms
  std::vector<RawClient> guesses(kGuesses);
  const auto began = SteadyClock::now();
  for (int i = 0; i < kGuesses; ++i) {
    ASSERT_TRUE(guesses[i].connect(broker_->port()));
    const std::string password = "guess-" + std::to_string(i);  // outlives m, which views it
    wire::Hello m;
    m.client_name = "guess";
    m.credentials = true;
    m.user = "alice";
    m.password = password;
    ASSERT_TRUE(guesses[i].send_encoded([&](std::span<uint8_t> out) { return wire::encode(out, m); }));
    if (i % kBatch == kBatch - 1) {
      ASSERT_TRUE(one_more_arrives()) << "update " << published << " during the storm";
      std::this_thread::sleep_until(began + std::chrono::milliseconds(50 * (i / kBatch + 1)));
    }
  }
  ASSERT_TRUE(one_more_arrives());
  for (auto& c : guesses) EXPECT_EQ(c.wait_closed_with(), wire::Code::AuthFailed);
  const auto storm_seconds =
      std::chrono::duration_cast<std::chrono::seconds>(SteadyClock::now() - began).count() + 1;
  ASSERT_TRUE(one_more_arrives());
  EXPECT_TRUE(model.errors().empty()) << model.errors().front();
  const auto* channel = model.find("EQ/STORM");
  ASSERT_NE(channel, nullptr);
  EXPECT_EQ(channel->messages(), uint64_t(published));

  const std::string log = broker_->err();
  size_t lines = 0;
  for (size_t at = log.find("failed login for user"); at != std::string::npos; at = log.find("failed login for user", at + 1)) ++lines;
  EXPECT_LE(lines, 5u + 5u * size_t(storm_seconds)) << "5 lines a second at most, in " << storm_seconds << " s";
}

// Logins checked at the default password cost (argon2id, 64 MiB, 3 passes:
// each check takes long enough for a backlog to form behind it), many at
// once from 127.0.0.1, one from 127.0.0.2 (loopback takes any 127/8 source).
class LoginQueueTest : public ::testing::Test {
 protected:
  void start(const std::string& settings) {
    auto costly = auth::hash_password("alice-pw");
    ASSERT_TRUE(costly.ok());
    const std::string users = "[users.alice]\npassword = \"" + *costly + "\"\n[users.ops]\npassword = \"" +
                              hash("ops-pw") + "\"\nadmin = true\n";
    BrokerOptions options;
    options.args = {"--http-listen", "127.0.0.1:0"};
    options.config_toml = "auth_file = \"" + dir_.write("users.toml", users) + "\"\n" + settings;
    broker_ = std::make_unique<BrokerProcess>(options);
    ASSERT_TRUE(broker_->ready()) << broker_->err();
  }

  // n connections from 127.0.0.1, each sending a HELLO with a wrong password.
  void guess(std::vector<RawClient>& tries, size_t n) {
    tries.resize(n);
    for (auto& c : tries) ASSERT_TRUE(send_wrong_password(c, broker_->port()));
  }

  // The ERROR a refused login gets (its code and text), or nullopt if none came in time.
  static std::optional<std::pair<wire::Code, std::string>> error_of(RawClient& c, int timeout_ms) {
    const auto deadline = SteadyClock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
      auto f = c.next(static_cast<int>(std::max<int64_t>(0, left)));
      if (!f) return std::nullopt;
      if (auto e = f->as<wire::ErrorMsg>()) return std::make_pair(e->code, std::string(e->text));
    }
  }

  testing::TempDir dir_;
  std::unique_ptr<BrokerProcess> broker_;
};

// One verifier, 16 guesses queued from 127.0.0.1, then alice's right
// password from 127.0.0.2: the verifier takes the two addresses in turn, so
// her WELCOME comes after one or two more guesses are checked, not after all
// 16 (one queue for everyone answered the guesses first: 16 checks, seconds).
// An order, not a time: how many guesses were answered when she was welcomed.
TEST_F(LoginQueueTest, AGuessersBacklogWaitsBehindItsOwnAddressOnly) {
  ASSERT_NO_FATAL_FAILURE(start("auth_failure_delay_ms = 0\nauth_verifier_threads = 1\nauth_max_pending_per_source = 32\n"));
  constexpr size_t kGuesses = 16;
  std::vector<RawClient> tries;
  ASSERT_NO_FATAL_FAILURE(guess(tries, kGuesses));
  std::vector<bool> answered(kGuesses, false);
  auto count_answered = [&] {
    for (size_t i = 0; i < kGuesses; ++i) {
      if (answered[i]) continue;
      if (auto error = error_of(tries[i], 0)) {
        EXPECT_EQ(error->first, wire::Code::AuthFailed) << error->second;
        answered[i] = true;
      }
    }
    return std::count(answered.begin(), answered.end(), true);
  };
  // The first answer: the verifier is at work, the other guesses wait behind it.
  const auto deadline = SteadyClock::now() + std::chrono::milliseconds(testing::kDefaultTimeoutMs);
  while (count_answered() == 0 && SteadyClock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_GT(count_answered(), 0);

  RawClient alice;
  ASSERT_TRUE(alice.connect_from("127.0.0.2", broker_->port()));
  auto answer = alice.login("alice", "alice", "alice-pw");
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->as<wire::Welcome>().has_value()) << describe(*answer);
  EXPECT_LE(count_answered(), 8) << "of " << kGuesses << " guesses answered before 127.0.0.2's login";
  for (size_t i = 0; i < kGuesses; ++i) {
    if (!answered[i]) {
      EXPECT_EQ(tries[i].wait_closed_with(), wire::Code::AuthFailed);
    }
  }
}

// Default settings (2 verifiers, 4 logins in progress per address): 16
// guesses sent at once from 127.0.0.1 cannot all be in progress, and those
// past the bound are refused at once with a clear text (AUTH_FAILED) and
// counted in /metrics. Once the others are answered, 127.0.0.1 may log in.
TEST_F(LoginQueueTest, PastItsBoundAnAddressGetsAClearRefusalAndACount) {
  ASSERT_NO_FATAL_FAILURE(start("auth_failure_delay_ms = 100\n"));
  std::vector<RawClient> tries;
  ASSERT_NO_FATAL_FAILURE(guess(tries, 16));
  uint64_t refused = 0;
  for (auto& c : tries) {
    auto error = error_of(c, testing::kDefaultTimeoutMs);
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ(error->first, wire::Code::AuthFailed);
    if (error->second == "too many login attempts from this address, try again later") {
      ++refused;
    } else {
      EXPECT_EQ(error->second, "unknown user or wrong password");
    }
  }
  EXPECT_GE(refused, 1u);
  EXPECT_LE(refused, 12u) << "the first 4 were checked";
  EXPECT_EQ(metric(broker_->http_port(), "tickwire_auth_source_refusals_total"), refused);
  RawClient alice;
  ASSERT_TRUE(alice.connect(broker_->port()));
  auto answer = alice.login("alice", "alice", "alice-pw");
  ASSERT_TRUE(answer.has_value());
  EXPECT_TRUE(answer->as<wire::Welcome>().has_value()) << describe(*answer);
}

// The bound holds for every protocol, HTTP Basic included: while 127.0.0.1
// has its logins in progress (16 native guesses, one verifier), a request
// from 127.0.0.1 with credentials is refused unchecked with 503, the reason
// and Retry-After (not 401: its password was never looked at).
TEST_F(LoginQueueTest, AnHttpLoginPastTheBoundIsAnsweredBusy) {
  ASSERT_NO_FATAL_FAILURE(start("auth_failure_delay_ms = 100\nauth_verifier_threads = 1\n"));
  std::vector<RawClient> tries;
  ASSERT_NO_FATAL_FAILURE(guess(tries, 16));
  testing::BlockingSocket http(broker_->http_port());
  ASSERT_TRUE(http.send("GET /metrics HTTP/1.1\r\nHost: t\r\nAuthorization: Basic " +
                        http::base64_encode("alice:not-the-password") + "\r\nConnection: close\r\n\r\n"));
  http.read_to_close();
  const std::string& reply = http.received();
  EXPECT_EQ(reply.rfind("HTTP/1.1 503", 0), 0u) << reply;
  EXPECT_NE(reply.find("Retry-After: 1"), std::string::npos) << reply;
  EXPECT_NE(reply.find("too many login attempts from this address"), std::string::npos) << reply;
}

TEST_F(EntitlementsTest, AReloadRevokingOnePatternClosesExactlyThoseChannels) {
  RawClient feed, alice;
  login(feed, "feed");
  ASSERT_TRUE(feed.register_topic(1, wire::PayloadKind::FieldList, "EQ/IBM"));
  ASSERT_TRUE(feed.register_topic(2, wire::PayloadKind::FieldList, "FX/EUR"));
  ASSERT_TRUE(feed.publish(1, int_payload(1)));
  ASSERT_TRUE(feed.publish(2, int_payload(1)));
  login(alice, "alice");
  ASSERT_EQ(ack_code(alice.subscribe(1, "EQ/>")), wire::Code::Ok);
  ASSERT_EQ(ack_code(alice.subscribe(2, "FX/EUR")), wire::Code::Ok);

  std::map<std::string, uint32_t> ids;
  std::map<uint32_t, uint64_t> seqs;
  bool closed = false;
  std::vector<std::string> errors;
  auto read = [&](const OwnedFrame& f) {
    if (auto c = f.as<wire::ChannelIntro>()) {
      ids[std::string(c->topic)] = c->channel_id;
    } else if (auto i = f.as<wire::Image>()) {
      if (closed && i->channel_id == ids["FX/EUR"]) errors.push_back("FX/EUR image after its close");
      seqs[i->channel_id] = i->seq;
    } else if (auto u = f.as<wire::Update>()) {
      if (closed && u->channel_id == ids["FX/EUR"]) errors.push_back("FX/EUR update after its close");
      if (u->seq != seqs[u->channel_id] + 1) errors.push_back("a gap on channel " + std::to_string(u->channel_id));
      seqs[u->channel_id] = u->seq;
    } else if (auto s = f.as<wire::StatusMsg>()) {
      if (s->channel_id != ids["FX/EUR"] || s->state != wire::ChannelState::Closed ||
          s->code != wire::Code::NotAuthorized) {
        errors.push_back("unexpected " + describe(f));
      }
      closed = true;
    } else {
      errors.push_back("unexpected " + describe(f));
    }
  };
  // Publish on both channels around the reload until the STATUS arrives, then a while longer.
  dir_.write("users.toml", users_file(false));
  broker_->send_signal(SIGHUP);
  int after_close = 0;
  for (int k = 2; after_close < 10 && k < 200; ++k) {
    ASSERT_TRUE(feed.publish(1, int_payload(k)));
    ASSERT_TRUE(feed.publish(2, int_payload(k)));  // withdrawn by the reload: dropped, not fatal
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    while (auto f = alice.next_message(1)) read(*f);
    if (closed) ++after_close;
  }
  ASSERT_TRUE(closed) << "no STATUS CLOSED for FX/EUR";
  EXPECT_TRUE(errors.empty()) << errors.front();
  // EQ/IBM kept flowing: every update arrived, in order (no gap was seen above).
  ASSERT_TRUE(feed.publish(1, int_payload(-1)));
  uint64_t ibm = seqs[ids["EQ/IBM"]];
  while (auto f = alice.next_message(2'000)) {
    read(*f);
    if (seqs[ids["EQ/IBM"]] > ibm) break;
  }
  EXPECT_GT(seqs[ids["EQ/IBM"]], ibm);
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_TRUE(feed.connected());
}

std::optional<testing::AckReply> reload(RawClient& c, uint32_t request_id) {
  if (!c.send_encoded([&](std::span<uint8_t> out) { return wire::encode(out, wire::ReloadMsg{request_id}); })) {
    return std::nullopt;
  }
  return c.wait_ack(request_id);
}

// A reload that revokes `provide` withdraws the service as the provider's own
// WITHDRAW would: the subscriber's channel loses its provider, no REQUEST
// reaches the connection any more, and its other rights and the connection stay.
TEST_F(EntitlementsTest, AReloadRevokingProvideWithdrawsTheService) {
  RawClient feed, viewer;
  login(feed, "feed");
  ASSERT_EQ(ack_code(feed.provide(1, "SVC")), wire::Code::Ok);
  login(viewer, "viewer");
  ASSERT_EQ(ack_code(viewer.subscribe(1, "SVC/A")), wire::Code::Ok);
  auto request = feed.next_of_type(wire::MsgType::Request);
  ASSERT_TRUE(request);
  auto asked = request->as<wire::Request>();
  ASSERT_TRUE(asked);
  EXPECT_EQ(asked->topic, "SVC/A");
  ASSERT_TRUE(feed.publish(asked->stream_id, int_payload(1), true));
  ASSERT_TRUE(viewer.next_of_type(wire::MsgType::Image)) << "the provider's answer";

  dir_.write("users.toml", users_file(true, false));
  broker_->send_signal(SIGHUP);
  auto lost = viewer.next_of_type(wire::MsgType::Status);
  ASSERT_TRUE(lost) << "no STATUS after the reload";
  auto status = lost->as<wire::StatusMsg>();
  ASSERT_TRUE(status);
  EXPECT_EQ(status->state, wire::ChannelState::Stale);
  EXPECT_EQ(status->code, wire::Code::ProviderLost);

  (void)viewer.subscribe(2, "SVC/B");
  EXPECT_FALSE(feed.next_of_type(wire::MsgType::Request, 500)) << "a REQUEST reached the revoked provider";
  EXPECT_EQ(ack_code(feed.provide(2, "SVC")), wire::Code::NotAuthorized);
  ASSERT_TRUE(feed.register_topic(1, wire::PayloadKind::FieldList, "EQ/KEPT"));  // publishing EQ/> is still allowed
  ASSERT_TRUE(feed.publish(1, int_payload(1)));
  auto kept = feed.snapshot(3, "EQ/KEPT");
  EXPECT_EQ(ack_code(kept.ack), wire::Code::NotAuthorized) << "feed may publish EQ/>, not subscribe to it";
  EXPECT_TRUE(feed.connected());
  EXPECT_TRUE(viewer.connected());
}

TEST_F(EntitlementsTest, AnAdminsReloadAppliesTheNewRules) {
  RawClient feed, alice, ops;
  login(feed, "feed");
  ASSERT_TRUE(feed.register_topic(1, wire::PayloadKind::FieldList, "FX/EUR"));
  ASSERT_TRUE(feed.publish(1, int_payload(1)));
  login(alice, "alice");
  ASSERT_EQ(ack_code(alice.subscribe(1, "FX/EUR")), wire::Code::Ok);
  EXPECT_EQ(ack_code(reload(alice, 2)), wire::Code::NotAuthorized);  // not an admin
  login(ops, "ops");
  dir_.write("users.toml", "[users.ops\n");  // a broken file: refused, the rules in force stay
  EXPECT_EQ(ack_code(reload(ops, 1)), wire::Code::NotFound);
  dir_.write("users.toml", users_file(false));
  EXPECT_EQ(ack_code(reload(ops, 2)), wire::Code::Ok);
  auto closed = alice.next_of_type(wire::MsgType::Status, 5'000);
  ASSERT_TRUE(closed.has_value()) << "no STATUS after the reload";
  auto status = closed->as<wire::StatusMsg>();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->state, wire::ChannelState::Closed);
  EXPECT_EQ(status->code, wire::Code::NotAuthorized);
}

// The sum of one counter over the usage log's lines for `user`.
uint64_t usage_sum(const std::string& log_path, const std::string& user, const std::string& counter) {
  std::ifstream log(log_path);
  std::string line;
  uint64_t sum = 0;
  while (std::getline(log, line)) {
    if (line.find(" user=" + user + " ") == std::string::npos) continue;
    const size_t at = line.find(" " + counter + "=");
    if (at != std::string::npos) sum += std::stoull(line.substr(at + counter.size() + 2));
  }
  return sum;
}

// The value of one sample in the broker's /metrics (nullopt: no such line).
std::optional<uint64_t> metric(uint16_t http_port, const std::string& sample) {
  admin::HttpTarget target;
  target.port = http_port;
  target.user = "ops";  // with a users file, /metrics asks for a user (docs/operations.md)
  target.password = "ops-pw";
  auto reply = admin::http_request(target, "GET", "/metrics");
  if (!reply.ok() || reply->status != 200) return std::nullopt;
  const size_t at = reply->body.find("\n" + sample + " ");
  if (at == std::string::npos) return std::nullopt;
  return std::stoull(reply->body.substr(at + sample.size() + 2));
}

// Registers topics PREFIX/from .. PREFIX/to-1 on publish ids from+1 ...;
// then the code of a fence (the SUBSCRIBE's ACK, or the ERROR that closed the connection).
std::optional<wire::Code> register_range(RawClient& c, const std::string& prefix, int from, int to) {
  for (int i = from; i < to; ++i) {
    if (!c.register_topic(static_cast<uint32_t>(i + 1), wire::PayloadKind::FieldList, prefix + std::to_string(i))) break;
  }
  auto ack = c.subscribe(999, "HOG/fence", 5'000);
  if (ack) return ack->code;
  return c.wait_closed_with(5'000);
}

TEST_F(EntitlementsTest, AUsersConnectionsTogetherCreateAtMostItsMaxChannels) {
  ASSERT_NO_FATAL_FAILURE(start({"--http-listen", "127.0.0.1:0"}));
  RawClient first, second, third, herd;
  login(first, "hog");
  login(second, "hog");
  EXPECT_EQ(register_range(first, "HOG/A", 0, 3), wire::Code::Ok);
  EXPECT_EQ(register_range(second, "HOG/B", 0, 2), wire::Code::Ok);
  // The sixth new channel of the user, on any of its connections, is refused.
  EXPECT_EQ(register_range(second, "HOG/B", 2, 3), wire::Code::ChannelQuota);
  // The loops' counters reach /metrics on their next tick.
  std::optional<uint64_t> hits;
  for (int i = 0; i < 100 && hits != 1u; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    hits = metric(broker_->http_port(), "tickwire_user_channel_quota_hits_total");
  }
  EXPECT_EQ(hits, 1u);
  EXPECT_EQ(metric(broker_->http_port(), "tickwire_channel_quota_hits_total"), 0u);
  // Existing channels stay open to it; other users are not bound by it.
  login(third, "hog");
  EXPECT_EQ(register_range(third, "HOG/A", 0, 3), wire::Code::Ok);
  login(herd, "herd");
  EXPECT_EQ(register_range(herd, "HOG/H", 0, 10), wire::Code::Ok);
  // A connection that closes gives its channels back to its user.
  first.close();
  std::optional<wire::Code> created;
  for (int attempt = 0; attempt < 50 && created != wire::Code::Ok; ++attempt) {
    RawClient again;
    login(again, "hog");
    created = register_range(again, "HOG/C", 0, 3);
    if (created != wire::Code::Ok) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(created, wire::Code::Ok);
}

TEST_F(EntitlementsTest, UsageIsWrittenPerUserAndShownInTheMetrics) {
  ASSERT_NO_FATAL_FAILURE(start({"--http-listen", "127.0.0.1:0"}));
  RawClient feed, alice;
  login(feed, "feed");
  ASSERT_TRUE(feed.register_topic(1, wire::PayloadKind::FieldList, "EQ/IBM"));
  ASSERT_TRUE(feed.publish(1, int_payload(0)));
  login(alice, "alice");
  ASSERT_EQ(ack_code(alice.subscribe(1, "EQ/>")), wire::Code::Ok);
  uint64_t messages = 0, bytes = 0;
  auto read_until = [&](uint64_t count) {
    while (messages < count) {
      auto f = alice.next_message(5'000);
      ASSERT_TRUE(f.has_value()) << "got " << messages << " messages";
      bytes += f->bytes().size();
      if (f->type() == wire::MsgType::Image || f->type() == wire::MsgType::Update) ++messages;
    }
  };
  // The image before the updates are published: in thread tiers the ACK may
  // precede the owning gateway's taking the subscription, and updates
  // published until then would be in the image (docs/protocol.md, "Subscribing").
  ASSERT_NO_FATAL_FAILURE(read_until(1));
  for (int k = 1; k <= 5; ++k) ASSERT_TRUE(feed.publish(1, int_payload(k)));
  ASSERT_NO_FATAL_FAILURE(read_until(6));  // the image, then five updates
  alice.close();  // its last counts are reported when the broker reaps the connection
  const auto give_up = SteadyClock::now() + std::chrono::seconds(5);
  while (usage_sum(usage_log_, "alice", "messages") < messages && SteadyClock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(usage_sum(usage_log_, "alice", "messages"), messages);
  EXPECT_EQ(usage_sum(usage_log_, "alice", "logins"), 1u);
  EXPECT_EQ(usage_sum(usage_log_, "alice", "subscriptions"), 1u);
  EXPECT_EQ(usage_sum(usage_log_, "alice", "channels"), 1u);
  // Everything alice read (WELCOME and ACK included) was written to her connection.
  EXPECT_GE(usage_sum(usage_log_, "alice", "bytes"), bytes);
  EXPECT_EQ(usage_sum(usage_log_, "feed", "messages"), 0u);
  // /metrics counts the same since the start.
  EXPECT_EQ(metric(broker_->http_port(), "tickwire_user_messages_total{user=\"alice\"}"), messages);
  EXPECT_EQ(metric(broker_->http_port(), "tickwire_user_logins_total{user=\"alice\"}"), 1u);
  EXPECT_EQ(metric(broker_->http_port(), "tickwire_user_subscriptions_total{user=\"alice\"}"), 1u);
  EXPECT_EQ(metric(broker_->http_port(), "tickwire_user_messages_total{user=\"feed\"}"), 0u);
}

}  // namespace
}  // namespace tw::it
