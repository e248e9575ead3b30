// Issue 30: an HA pair arbitrated by a real etcd (Debian's etcd-server,
// started by the test). Two tickwired processes: the one etcd elects serves
// clients; the other refuses them with ERROR NOT_PRIMARY naming the primary,
// and takes over when the primary dies or resigns.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "tickwire/client/client.h"
#include "ha/etcd.h"
#include "ha_support.h"
#include "testlib/etcd_server.h"
#include "testlib/fields.h"

namespace tw::it {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::EtcdServer;

constexpr int kTtl = kHaTtl;

class HaPair : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(EtcdServer::installed()) << "etcd-server is not installed (scripts/deps.sh)";
    etcd_ = std::make_unique<EtcdServer>();
    ASSERT_TRUE(etcd_->ok()) << etcd_->log();
    first_ = start_member(*etcd_, stores_[0]);
    ASSERT_TRUE(first_->ready()) << first_->err();
    ASSERT_TRUE(eventually(10s, [&] { return hello(first_->port()).welcome; })) << first_->err();
    second_ = start_member(*etcd_, stores_[1]);
    ASSERT_TRUE(second_->ready()) << second_->err();
    // Refused at once ("no primary is elected yet"), then naming the primary once its first campaign lost.
    ASSERT_TRUE(eventually(10s, [&] { return hello(second_->port()).text == backup_of(*first_); })) << second_->err();
  }

  testing::TempDir stores_[2];
  std::unique_ptr<EtcdServer> etcd_;
  std::unique_ptr<BrokerProcess> first_, second_;
};

TEST_F(HaPair, TheBackupRefusesClientsNamingThePrimaryAndTakesOverWhenThePrimaryIsKilled) {
  const Answer refused = hello(second_->port());
  EXPECT_EQ(refused.code, wire::Code::NotPrimary);
  EXPECT_FALSE(refused.welcome);

  const auto killed = Clock::now();
  first_->send_signal(SIGKILL);
  ASSERT_TRUE(eventually(15s, [&] { return hello(second_->port()).welcome; })) << second_->err();
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - killed);
  std::printf("failover: the backup served a new client %lld ms after the primary's SIGKILL (lease %d s)\n",
              static_cast<long long>(took.count()), kTtl);

  // The new primary serves: a publish reaches a subscriber.
  RawClient pub, sub;
  ASSERT_TRUE(open_client(pub, second_->port(), "pub"));
  ASSERT_TRUE(open_client(sub, second_->port(), "sub"));
  StreamModel model;
  ASSERT_TRUE(sub.send_subscribe(1, "HA/X"));
  ASSERT_TRUE(pub.register_topic(1, wire::PayloadKind::FieldList, "HA/X"));
  ASSERT_TRUE(pass_fence(pub, 1, sub, model, "HA/X"));

  // The old primary, back, is the backup now and names the new primary.
  first_ = start_member(*etcd_, stores_[0]);
  ASSERT_TRUE(first_->ready()) << first_->err();
  ASSERT_TRUE(eventually(10s, [&] { return hello(first_->port()).text == backup_of(*second_); })) << first_->err();
  EXPECT_EQ(hello(first_->port()).code, wire::Code::NotPrimary);
}

// Both members say what they are: the admin API, /metrics, `tickwire ha status`, `tickwire top`.
TEST_F(HaPair, EachMemberShowsItsRoleAndTermInTheApiMetricsAndTheCli) {
  const auto get = admin_get;
  // Acknowledging once the first term's grace has passed.
  ASSERT_TRUE(eventually(10s, [&] { return get(*first_, "/api/v1/ha").find("\"acknowledging\":true") != std::string::npos; }))
      << get(*first_, "/api/v1/ha");
  const std::string primary = get(*first_, "/api/v1/ha"), backup = get(*second_, "/api/v1/ha");
  EXPECT_NE(primary.find("\"role\":\"primary\""), std::string::npos) << primary;
  EXPECT_NE(primary.find("\"serving\":true"), std::string::npos) << primary;
  EXPECT_NE(backup.find("\"role\":\"backup\""), std::string::npos) << backup;
  EXPECT_NE(backup.find("\"serving\":false"), std::string::npos) << backup;
  EXPECT_NE(backup.find("\"acknowledging\":false"), std::string::npos) << backup;
  EXPECT_NE(backup.find("\"leader\":\"" + address(*first_) + "\""), std::string::npos) << backup;
  const std::string metrics = get(*second_, "/metrics");
  EXPECT_NE(metrics.find("\ntickwire_ha_primary 0\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\ntickwire_ha_serving 0\n"), std::string::npos) << metrics;
  EXPECT_NE(get(*first_, "/metrics").find("\ntickwire_ha_primary 1\n"), std::string::npos);
  auto cli = testing::run_to_completion(testing::bin_path("tickwire"),
                                        {"ha", "status", "--http", "127.0.0.1:" + std::to_string(second_->http_port())});
  EXPECT_EQ(cli.status.code, 0) << cli.err;
  EXPECT_NE(cli.out.find(address(*second_) + ": backup, epoch "), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find("primary: " + address(*first_)), std::string::npos) << cli.out;
  auto top = testing::run_to_completion(testing::bin_path("tickwire"),
                                        {"top", "--once", "--http", "127.0.0.1:" + std::to_string(second_->http_port())});
  EXPECT_TRUE(top.status.clean()) << top.err;
  EXPECT_NE(top.out.find("\nHA  backup  epoch "), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("serving no  acknowledging no  primary " + address(*first_)), std::string::npos) << top.out;
}

// A manual switch-over by an operator (the leader key deleted in etcd): the
// primary closes its clients with NOT_PRIMARY, and the backup serves.
TEST_F(HaPair, AfterASwitchOverThePrimaryClosesItsClientsAndTheBackupServes) {
  RawClient client;
  ASSERT_TRUE(open_client(client, first_->port(), "on-the-primary"));
  ha::Etcd operator_client(ha::EtcdOptions{{etcd_->endpoint()}});
  auto holder = operator_client.leader("tickwire/ha/leader");
  ASSERT_TRUE(holder && *holder);
  EXPECT_EQ((*holder)->value, address(*first_));
  auto deleted = operator_client.resign("tickwire/ha/leader", (*holder)->epoch);
  ASSERT_TRUE(deleted && *deleted);

  std::optional<wire::Code> closed_with;
  ASSERT_TRUE(eventually(15s, [&] {
    auto f = client.next(100);
    if (f) {
      if (auto e = f->as<wire::ErrorMsg>()) closed_with = e->code;
    }
    return closed_with.has_value();
  }));
  EXPECT_EQ(*closed_with, wire::Code::NotPrimary);
  ASSERT_TRUE(eventually(15s, [&] { return hello(second_->port()).welcome; })) << second_->err();
  ASSERT_TRUE(eventually(10s, [&] { return hello(first_->port()).code == wire::Code::NotPrimary; }));
}

// etcd unreachable (paused): the primary goes on serving direct messaging,
// but past its lease's end by its own clock it acknowledges no guaranteed
// publish (stored, answered NOT_PRIMARY: the publisher must go elsewhere).
TEST_F(HaPair, APrimaryCutOffFromEtcdServesDirectMessagingButAcknowledgesNoGuaranteedPublish) {
  const std::string server = address(*first_);
  // A first term's primary acknowledges once its grace has passed (it never
  // saw the lease of a holder before it: a TTL, docs/ARCHITECTURE.md).
  testing::RunResult ok;
  ASSERT_TRUE(eventually(10s, [&] {
    ok = testing::run_to_completion(testing::bin_path("tickwire"), {"-s", server, "pub", "ORD/A", "--guaranteed", "-d", "x"});
    return ok.status.code == 0;
  })) << ok.err;
  EXPECT_NE(ok.out.find("1 acknowledged"), std::string::npos) << ok.out;
  etcd_->pause();
  std::this_thread::sleep_for(std::chrono::seconds(kTtl) + 500ms);  // past the fence: TTL - 0.25 s after the last renewal
  auto fenced = testing::run_to_completion(testing::bin_path("tickwire"),
                                           {"-s", server, "pub", "ORD/A", "--guaranteed", "-d", "y"});
  EXPECT_EQ(fenced.status.code, 2) << fenced.out << fenced.err;
  EXPECT_NE(fenced.err.find("NOT_PRIMARY"), std::string::npos) << fenced.err;
  EXPECT_TRUE(hello(first_->port()).welcome) << "direct messaging stopped with etcd";
  etcd_->resume();
}

// libtickwire given both addresses: it follows the primary on its own. Its
// list starts with the backup, which refuses it (NOT_PRIMARY): it goes on to
// the primary; when the primary dies, it reconnects to the other, now
// elected, and resubscribes.
TEST_F(HaPair, AClientWithBothAddressesFollowsThePrimary) {
  client::Client c;
  client::Options options;
  ASSERT_TRUE(client::parse_server_list(address(*second_) + "," + address(*first_), options));
  options.client_name = "it40";
  options.reconnect_min_ms = 50;
  options.reconnect_max_ms = 1000;
  options.close_linger_ms = 0;
  auto connected = c.connect(options);
  ASSERT_TRUE(connected) << connected.error().message;
  std::vector<int64_t> values;
  std::optional<Clock::time_point> reconnected_at;
  c.on_connection([&](client::ConnectionEvent e, std::string_view) {
    if (e == client::ConnectionEvent::Reconnected) reconnected_at = Clock::now();
  });
  ASSERT_TRUE(c.subscribe("HA/>", [&](const client::Message& m) {
    fields::FieldImage image;
    if (image.replace(m.payload)) values.push_back(testing::int_field(image, 1).value_or(-1));
  }));
  auto poll_until = [&](auto done) {
    return eventually(15s, [&] {
      c.poll(20);
      return done();
    });
  };
  RawClient pub;
  ASSERT_TRUE(open_client(pub, first_->port(), "pub"));
  ASSERT_TRUE(pub.register_topic(1, wire::PayloadKind::FieldList, "HA/T"));
  ASSERT_TRUE(pub.publish(1, int_payload(1)));
  ASSERT_TRUE(poll_until([&] { return !values.empty() && values.back() == 1; })) << "nothing from the primary";

  const auto killed = Clock::now();
  first_->send_signal(SIGKILL);
  ASSERT_TRUE(poll_until([&] { return reconnected_at.has_value(); })) << "the client did not fail over";
  std::printf("failover: the client was reconnected to the new primary %lld ms after the primary's SIGKILL "
              "(lease %d s)\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(*reconnected_at - killed)
                                         .count()),
              kTtl);
  RawClient pub2;
  ASSERT_TRUE(open_client(pub2, second_->port(), "pub2"));
  ASSERT_TRUE(pub2.register_topic(1, wire::PayloadKind::FieldList, "HA/T"));
  ASSERT_TRUE(pub2.publish(1, int_payload(2)));
  ASSERT_TRUE(poll_until([&] { return !values.empty() && values.back() == 2; })) << "nothing from the new primary";
  c.close();
}

}  // namespace
}  // namespace tw::it
