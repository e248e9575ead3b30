// Issue 28: durable topic subscriptions and replay (docs/guaranteed.md),
// over the native protocol's version 5, against real tickwired processes:
// a durable subscription keeps what was published while its consumer was
// away, across a broker restart too; bound with another topic it starts
// afresh; unsubscribing deletes it; rights are checked; a queue that keeps
// acknowledged messages replays them from a sequence or a time (the CLI);
// a version-4 connection gets the new flags refused.
#include <chrono>
#include <filesystem>
#include <thread>

#include "auth/password.h"
#include "tickwire/client/client.h"
#include "tickwire/wire/guaranteed.h"
#include "guaranteed_support.h"
#include "it_support.h"
#include "testlib/process.h"

namespace tw::it {
namespace {

using testing::bin_path;
using testing::run_to_completion;
using testing::TempDir;

std::string store_toml(const std::string& dir, const std::string& queues = "") {
  return "[store]\ndir = \"" + dir + "\"\nsegment_bytes = 65536\n" + queues;
}

// Publishes each (topic, payload) guaranteed and waits for every answer to be OK.
void publish(uint16_t port, const std::vector<std::pair<std::string, std::string>>& messages) {
  client::Client pub;
  size_t acked = 0;
  pub.on_publish_ack([&](const client::PublishAnswer& a) {
    EXPECT_EQ(a.code, wire::Code::Ok) << a.text;
    ++acked;
  });
  ASSERT_TRUE(pub.connect(options_for(port, "it30d-pub")).ok());
  for (const auto& [topic, payload] : messages) ASSERT_TRUE(pub.publish_guaranteed(topic, bytes_of(payload)).ok());
  ASSERT_TRUE(poll_until({&pub}, [&] { return acked == messages.size(); }));
}

// A consumer of one binding: what it was given (payloads, in order) and the refusals it heard.
struct Consumer {
  client::Client client;
  std::vector<std::string> payloads;
  std::vector<client::ErrorInfo> refusals;
  std::vector<std::string> refusal_texts;
  uint32_t bind_id = 0;

  // Binds `name` and connects, as `login` when given.
  bool start(uint16_t port, const std::string& name, const client::BindOptions& options,
             const client::Options* login = nullptr) {
    client.on_error([this](const client::ErrorInfo& e) {
      refusals.push_back(e);
      refusal_texts.emplace_back(e.text);
    });
    auto bound = client.bind(name, [this](const client::QueueMessage& m) {
      payloads.emplace_back(m.payload.begin(), m.payload.end());
      (void)client.ack(m.bind_id, m.seq);
    }, options);
    if (!bound) return false;
    bind_id = *bound;
    return client.connect(login ? *login : options_for(port, "it30d-" + name)).ok();
  }
  bool wait_for(size_t n, int timeout_ms = 15'000) {
    return poll_until({&client}, [&] { return payloads.size() >= n || !refusals.empty(); }, timeout_ms) &&
           payloads.size() >= n;
  }
  bool wait_refused() {
    return poll_until({&client}, [&] { return !refusals.empty(); });
  }
};

client::BindOptions durable(const std::string& topic) { return client::BindOptions{.topic = topic}; }

TEST(It30Durable, ADurableSubscriptionKeepsWhatWasPublishedWhileItsConsumerWasAwayAcrossARestart) {
  TempDir store;
  const std::string toml = store_toml(store.path() + "/q");
  auto broker = std::make_unique<BrokerProcess>(BrokerOptions{.config_toml = toml});
  ASSERT_TRUE(broker->ready()) << broker->err();
  {
    Consumer first;
    ASSERT_TRUE(first.start(broker->port(), "my-fills", durable("FILL/>")));
    publish(broker->port(), {{"FILL/A", "1"}});
    ASSERT_TRUE(first.wait_for(1)) << (first.refusal_texts.empty() ? "" : first.refusal_texts[0]);
  }  // the consumer goes away; its subscription stays
  publish(broker->port(), {{"FILL/A", "2"}, {"OTHER/X", "no"}, {"FILL/B/C", "3"}});
  {
    Consumer back;
    ASSERT_TRUE(back.start(broker->port(), "my-fills", durable("FILL/>")));
    ASSERT_TRUE(back.wait_for(2));
    EXPECT_EQ(back.payloads, (std::vector<std::string>{"2", "3"}));
  }
  publish(broker->port(), {{"FILL/A", "4"}});
  broker->stop();
  broker = std::make_unique<BrokerProcess>(BrokerOptions{.config_toml = toml});
  ASSERT_TRUE(broker->ready()) << broker->err();
  Consumer after;
  ASSERT_TRUE(after.start(broker->port(), "my-fills", durable("FILL/>")));
  ASSERT_TRUE(after.wait_for(1));
  EXPECT_EQ(after.payloads, (std::vector<std::string>{"4"}));
  publish(broker->port(), {{"FILL/Z", "5"}});  // attracted again after the restart
  ASSERT_TRUE(after.wait_for(2));
  EXPECT_EQ(after.payloads.back(), "5");
}

TEST(It30Durable, AnotherTopicStartsAfreshAConflictIsRefusedAndUnsubscribeDeletesIt) {
  TempDir store;
  BrokerProcess broker({.config_toml = store_toml(store.path() + "/q",
                                                  "[[queue]]\nname = \"orders\"\nsubscriptions = [\"ORD/>\"]\n")});
  ASSERT_TRUE(broker.ready()) << broker.err();
  {
    Consumer make;
    ASSERT_TRUE(make.start(broker.port(), "sub1", durable("FILL/>")));
    publish(broker.port(), {{"FILL/A", "1"}});
    ASSERT_TRUE(make.wait_for(1));
  }
  publish(broker.port(), {{"FILL/A", "held"}, {"NEWS/A", "n0"}});

  Consumer moved;
  ASSERT_TRUE(moved.start(broker.port(), "sub1", durable("NEWS/>")));
  publish(broker.port(), {{"NEWS/A", "n1"}});
  ASSERT_TRUE(moved.wait_for(1));
  EXPECT_EQ(moved.payloads, (std::vector<std::string>{"n1"}));  // what FILL/> held went with the old topic

  Consumer other;  // the same name with yet another topic, while bound: refused
  ASSERT_TRUE(other.start(broker.port(), "sub1", durable("FILL/>")));
  ASSERT_TRUE(other.wait_refused());
  EXPECT_EQ(other.refusals[0].code, wire::Code::EndpointMismatch) << other.refusal_texts[0];

  Consumer queue_named;  // a queue is not a durable subscription
  ASSERT_TRUE(queue_named.start(broker.port(), "orders", durable("ORD/>")));
  ASSERT_TRUE(queue_named.wait_refused());
  EXPECT_EQ(queue_named.refusals[0].code, wire::Code::EndpointMismatch);
  EXPECT_NE(queue_named.refusal_texts[0].find("not a durable subscription"), std::string::npos);

  ASSERT_TRUE(moved.client.unsubscribe(moved.bind_id).ok());
  ASSERT_TRUE(poll_until({&moved.client}, [&] { return !std::filesystem::exists(store.path() + "/q/sub1"); }));
  EXPECT_TRUE(moved.refusals.empty());
  Consumer gone;  // a plain BIND of the name: no such queue any more
  ASSERT_TRUE(gone.start(broker.port(), "sub1", client::BindOptions{}));
  ASSERT_TRUE(gone.wait_refused());
  EXPECT_EQ(gone.refusals[0].code, wire::Code::NotFound);
}

TEST(It30Durable, ADurableSubscriptionNeedsConsumeOnItsNameAndRealTimeSubscribeOnAllOfItsTopic) {
  TempDir store;
  auto hash = [](const std::string& pw) { return *auth::hash_password(pw, auth::HashCost{1, 1024, 1}); };
  const std::string users = store.write(
      "users.toml", "[users.desk]\npassword = \"" + hash("desk-pw") + "\"\n"
                    "[[users.desk.rule]]\nallow = [\"consume\"]\ntopics = [\"desk-1\"]\n"
                    "[[users.desk.rule]]\nallow = [\"subscribe\", \"publish\"]\ntopics = [\"FILL/>\"]\n"
                    "[[users.desk.rule]]\ndeny = [\"subscribe\"]\ntopics = [\"FILL/SECRET\"]\n");
  BrokerProcess broker({.config_toml = "auth_file = \"" + users + "\"\n" + store_toml(store.path() + "/q")});
  ASSERT_TRUE(broker.ready()) << broker.err();
  client::Options login = options_for(broker.port(), "it30d-desk");
  login.user = "desk";
  login.password = "desk-pw";
  auto refused_with = [&](const std::string& name, const std::string& topic) {
    Consumer c;
    EXPECT_TRUE(c.start(broker.port(), name, durable(topic), &login));
    EXPECT_TRUE(c.wait_refused()) << name << " " << topic;
    return c.refusals.empty() ? wire::Code::Ok : c.refusals[0].code;
  };
  EXPECT_EQ(refused_with("other-sub", "FILL/A"), wire::Code::NotAuthorized);   // no consume on the name
  EXPECT_EQ(refused_with("desk-1", ">"), wire::Code::NotAuthorized);           // beyond FILL/>
  EXPECT_EQ(refused_with("desk-1", "FILL/>"), wire::Code::NotAuthorized);      // a deny inside it
  Consumer ok;
  ASSERT_TRUE(ok.start(broker.port(), "desk-1", durable("FILL/A/*"), &login));
  client::Client pub;
  size_t acked = 0;
  pub.on_publish_ack([&](const client::PublishAnswer& a) { acked += a.code == wire::Code::Ok; });
  ASSERT_TRUE(pub.connect(login).ok());
  // Wait until bound: the first publish may otherwise come before the subscription exists.
  ASSERT_TRUE(poll_until({&ok.client}, [&] { return std::filesystem::exists(store.path() + "/q/desk-1"); }));
  ASSERT_TRUE(pub.publish_guaranteed("FILL/A/B", bytes_of("x")).ok());
  ASSERT_TRUE(poll_until({&pub, &ok.client}, [&] { return acked == 1 && ok.payloads.size() == 1; }));
  EXPECT_TRUE(ok.refusals.empty());
}

// A queue with retain_bytes keeps what was acknowledged; `tickwire consume
// --from-seq / --from-time` has it delivered again, flagged redelivered.
TEST(It30Durable, AQueueReplaysAcknowledgedMessagesFromASeqOrATime) {
  TempDir store;
  BrokerProcess broker({.config_toml = store_toml(store.path() + "/q",
                                                  "[[queue]]\nname = \"audit\"\nsubscriptions = [\"AUD/>\"]\n"
                                                  "retain_bytes = 10000000\n"),
                        .log_level = "info"});
  ASSERT_TRUE(broker.ready()) << broker.err();
  const std::string server = "127.0.0.1:" + std::to_string(broker.port());
  auto consume = [&](std::vector<std::string> extra, const std::string& timeout_ms = "5000") {
    std::vector<std::string> args = {"-s", server, "consume", "audit", "--timeout-ms", timeout_ms};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_to_completion(bin_path("tickwire"), args);
  };
  publish(broker.port(), {{"AUD/A", "a1"}, {"AUD/A", "a2"}, {"AUD/A", "a3"}});
  auto first = consume({"-n", "3"});
  ASSERT_EQ(first.status.code, 0) << first.err;
  EXPECT_EQ(first.out, "audit seq=1 AUD/A a1\naudit seq=2 AUD/A a2\naudit seq=3 AUD/A a3\n");

  auto again = consume({"-n", "2", "--from-seq", "2"});
  ASSERT_EQ(again.status.code, 0) << again.err;
  EXPECT_EQ(again.out, "audit seq=2 redelivered AUD/A a2\naudit seq=3 redelivered AUD/A a3\n");

  const auto since = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  publish(broker.port(), {{"AUD/B", "b4"}, {"AUD/B", "b5"}});
  auto fresh = consume({"-n", "2"});
  EXPECT_EQ(fresh.out, "audit seq=4 AUD/B b4\naudit seq=5 AUD/B b5\n");
  auto by_time = consume({"-n", "2", "--from-time", std::to_string(since)});
  ASSERT_EQ(by_time.status.code, 0) << by_time.err;
  EXPECT_EQ(by_time.out, "audit seq=4 redelivered AUD/B b4\naudit seq=5 redelivered AUD/B b5\n");
  EXPECT_NE(broker.err().find("queue audit: replay from seq 4"), std::string::npos) << broker.err();
  auto nothing_new = consume({"-n", "1"}, "300");
  EXPECT_EQ(nothing_new.status.code, 1) << "everything was acknowledged again: " << nothing_new.out;
}

// Version 5's flags on a connection that settled on version 4: malformed, and that connection alone is closed.
TEST(It30Durable, AVersion4ConnectionGetsTheNewFlagsRefused) {
  TempDir store;
  BrokerProcess broker({.config_toml = store_toml(store.path() + "/q")});
  ASSERT_TRUE(broker.ready()) << broker.err();
  RawClient old;
  ASSERT_TRUE(old.connect(broker.port()));
  ASSERT_TRUE(old.send_hello("v4", 0, 1, 4));
  auto welcome = old.next_message();
  ASSERT_TRUE(welcome && welcome->as<wire::Welcome>());
  EXPECT_EQ(welcome->as<wire::Welcome>()->version, 4);
  wire::Bind bind{1, 0, "sub", "FILL/>"};
  ASSERT_TRUE(old.send_encoded([&](std::span<uint8_t> out) { return wire::encode(out, bind); }));
  auto error = old.next_of_type(wire::MsgType::Error);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->as<wire::ErrorMsg>()->code, wire::Code::MalformedFrame);
  Consumer v5;  // others are served
  ASSERT_TRUE(v5.start(broker.port(), "sub", durable("FILL/>")));
  publish(broker.port(), {{"FILL/A", "1"}});
  ASSERT_TRUE(v5.wait_for(1));
}

}  // namespace
}  // namespace tw::it
