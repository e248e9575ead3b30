// Broker links (issue 31): real tickwired processes chained core -> edge ->
// edge2 by [[link]]s, with libtickwire publishers, providers and subscribers
// on each (docs/ARCHITECTURE.md, "Broker links").
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "admin/http_client.h"
#include "auth/password.h"
#include "tickwire/client/client.h"
#include "tickwire/fields/field_list.h"
#include "integration/it_support.h"
#include "testlib/fields.h"
#include "testlib/process.h"

namespace tw::it {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

struct Got {
  client::MessageKind kind;
  uint64_t seq = 0;
  std::optional<int64_t> value;  // field 1
  bool gap = false;
  wire::ChannelState state = wire::ChannelState::Ok;
};

// A libtickwire connection to one broker; as a subscriber it records, per topic, what it got.
struct Peer {
  client::Client c;
  std::map<std::string, std::vector<Got>> got;

  bool connect(uint16_t port, const std::string& name, const std::string& user = {},
               const std::string& password = {}) {
    client::Options options;
    options.user = user;
    options.password = password;
    options.port = port;
    options.client_name = name;
    options.reconnect_min_ms = 50;
    options.reconnect_max_ms = 200;
    options.close_linger_ms = 0;
    return static_cast<bool>(c.connect(options));
  }
  bool subscribe(const std::string& pattern) {
    return static_cast<bool>(c.subscribe(pattern, [this](const client::Message& m) {
      fields::FieldImage image;
      std::optional<int64_t> value;
      if (m.kind != client::MessageKind::Status && image.replace(m.payload)) value = testing::int_field(image, 1);
      got[std::string(m.topic)].push_back({m.kind, m.seq, value, m.gap, m.state});
    }));
  }
  bool publish(const std::string& topic, int64_t value, bool image = false) {
    const std::vector<uint8_t> payload = testing::field_list({{1, value}});
    return static_cast<bool>(c.publish(topic, payload, image));
  }
  // The last value field 1 had on `topic` (images and updates), if any came.
  std::optional<int64_t> last(const std::string& topic) const {
    auto it = got.find(topic);
    if (it == got.end()) return std::nullopt;
    for (auto m = it->second.rbegin(); m != it->second.rend(); ++m) {
      if (m->kind != client::MessageKind::Status) return m->value;
    }
    return std::nullopt;
  }
  bool saw_state(const std::string& topic, wire::ChannelState state) const {
    auto it = got.find(topic);
    if (it == got.end()) return false;
    for (const Got& m : it->second) {
      if (m.kind == client::MessageKind::Status && m.state == state) return true;
    }
    return false;
  }
};

// Polls every peer until `done` holds or the safety timeout passes.
bool poll_until(const std::vector<Peer*>& peers, const std::function<bool()>& done,
                int timeout_ms = testing::kDefaultTimeoutMs) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    for (Peer* p : peers) p->c.poll(p == peers.back() ? 5 : 0);
  }
  return true;
}

// A broker with an HTTP listener, no MQTT, and these [[link]]s.
BrokerOptions broker_with(const std::string& links, uint16_t port = 0) {
  BrokerOptions options;
  options.port = port;
  options.args = {"--http-listen", "127.0.0.1:0"};
  options.config_toml = "mqtt_listen = \"\"\n" + links;
  return options;
}

// A [[link]] named `name` to these upstream ports, quick to retry and to linger.
std::string link_to(const std::string& name, const std::vector<uint16_t>& ports) {
  std::string list;
  for (uint16_t p : ports) list += (list.empty() ? "\"" : ", \"") + std::string("127.0.0.1:") + std::to_string(p) + "\"";
  return "[[link]]\nname = \"" + name + "\"\nupstreams = [" + list +
         "]\nreconnect_min_ms = 50\nreconnect_max_ms = 200\nlinger_ms = 200\n";
}

Json admin_get(const BrokerProcess& broker, const std::string& path) {
  admin::HttpTarget t;
  t.port = broker.http_port();
  auto reply = admin::http_request(t, "GET", path);
  if (!reply || reply->status != 200) return Json();
  return Json::parse(reply->body, nullptr, false);
}

// The core's view of the link's connection: its subscription patterns.
int64_t link_subscriptions_on(const BrokerProcess& core, const std::string& link) {
  const Json j = admin_get(core, "/api/v1/connections");
  if (!j.is_object() || !j.contains("connections")) return -1;
  for (const Json& c : j["connections"]) {
    if (c.value("client", "") == "link:" + link) return c.value("subscriptions", int64_t{-1});
  }
  return -1;
}

// Per topic: an IMAGE first, then UPDATEs 1..n in order, none flagged as a gap.
void expect_image_then_every_update(const Peer& peer, const std::string& topic, int64_t n, const char* who) {
  SCOPED_TRACE(std::string(who) + " " + topic);
  auto it = peer.got.find(topic);
  ASSERT_NE(it, peer.got.end());
  const std::vector<Got>& got = it->second;
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.front().kind, client::MessageKind::Image);
  int64_t next = 1;
  for (size_t i = 1; i < got.size(); ++i) {
    if (got[i].kind != client::MessageKind::Update) continue;
    EXPECT_FALSE(got[i].gap) << "update " << i;
    EXPECT_EQ(got[i].value, next) << "update " << i;
    EXPECT_EQ(got[i].seq, got[i - 1].seq + 1) << "update " << i;
    ++next;
  }
  EXPECT_EQ(next, n + 1);
}

TEST(It31Links, AWildcardSubscriberTwoHopsAwayGetsImagesThenEveryUpdateInOrder) {
  BrokerProcess core(broker_with(""));
  ASSERT_TRUE(core.ready()) << core.err();
  // The edge's first upstream address has nothing behind it: the link fails over to the core.
  BrokerProcess edge(broker_with(link_to("to-core", {testing::pick_free_port(), core.port()})));
  ASSERT_TRUE(edge.ready()) << edge.err();
  BrokerProcess edge2(broker_with(link_to("to-edge", {edge.port()})));
  ASSERT_TRUE(edge2.ready()) << edge2.err();

  Peer pub, on_core, on_edge, on_edge2;
  ASSERT_TRUE(pub.connect(core.port(), "pub"));
  ASSERT_TRUE(pub.publish("LN/A", 0, /*image=*/true));
  ASSERT_TRUE(pub.publish("LN/B", 0, /*image=*/true));
  ASSERT_TRUE(on_core.connect(core.port(), "sub-core") && on_core.subscribe("LN/>"));
  ASSERT_TRUE(on_edge.connect(edge.port(), "sub-edge") && on_edge.subscribe("LN/>"));
  ASSERT_TRUE(on_edge2.connect(edge2.port(), "sub-edge2") && on_edge2.subscribe("LN/>"));
  const std::vector<Peer*> all = {&pub, &on_core, &on_edge, &on_edge2};
  auto everyone_has = [&](int64_t value) {
    for (Peer* p : {&on_core, &on_edge, &on_edge2}) {
      if (p->last("LN/A") != value || p->last("LN/B") != value) return false;
    }
    return true;
  };
  ASSERT_TRUE(poll_until(all, [&] { return everyone_has(0); })) << "the images did not reach every hop";

  constexpr int64_t kUpdates = 50;
  for (int64_t i = 1; i <= kUpdates; ++i) {
    ASSERT_TRUE(pub.publish("LN/A", i));
    ASSERT_TRUE(pub.publish("LN/B", i));
  }
  ASSERT_TRUE(poll_until(all, [&] { return everyone_has(kUpdates); })) << "the updates did not reach every hop";
  for (const char* topic : {"LN/A", "LN/B"}) {
    expect_image_then_every_update(on_core, topic, kUpdates, "core");
    expect_image_then_every_update(on_edge, topic, kUpdates, "edge");
    expect_image_then_every_update(on_edge2, topic, kUpdates, "edge2");
  }
  const Json links = admin_get(edge, "/api/v1/links");
  ASSERT_TRUE(links.is_object()) << "GET /api/v1/links";
  ASSERT_EQ(links["links"].size(), 1u);
  EXPECT_EQ(links["links"][0]["name"], "to-core");
  EXPECT_EQ(links["links"][0]["connected"], true);
  EXPECT_EQ(links["links"][0]["upstream"], "127.0.0.1:" + std::to_string(core.port()));
  EXPECT_GE(links["links"][0]["failed_connects"].get<int64_t>(), 1);
  admin::HttpTarget t;
  t.port = edge.http_port();
  auto metrics = admin::http_request(t, "GET", "/metrics");
  ASSERT_TRUE(metrics && metrics->status == 200);
  EXPECT_NE(metrics->body.find("tickwire_link_connected{link=\"to-core\"} 1"), std::string::npos);
  EXPECT_NE(metrics->body.find("tickwire_link_patterns{link=\"to-core\"} 1"), std::string::npos);
}

// Many subscribers on the edge are one subscription per pattern on the core,
// and an exact subscription on the edge reaches a provider on the core.
TEST(It31Links, ManyEdgeSubscribersAreOneUpstreamSubscriptionAndReachACoreProvider) {
  BrokerProcess core(broker_with(""));
  ASSERT_TRUE(core.ready()) << core.err();
  BrokerProcess edge(broker_with(link_to("to-core", {core.port()})));
  ASSERT_TRUE(edge.ready()) << edge.err();

  Peer provider, pub;
  int requests = 0;
  uint32_t stream = 0;
  ASSERT_TRUE(provider.connect(core.port(), "provider"));
  ASSERT_TRUE(provider.c.provide(
      "SVC", "",
      [&](const client::Stream& s) {
        ++requests;
        stream = s.id;
        const std::vector<uint8_t> image = testing::field_list({{1, int64_t{7}}});
        (void)provider.c.publish_stream(s.id, image, true);
      },
      [](const client::Stream&) {}));
  ASSERT_TRUE(pub.connect(core.port(), "pub") && pub.publish("AG/X", 1, /*image=*/true));

  constexpr int kSubscribers = 8;
  std::vector<std::unique_ptr<Peer>> subs;
  std::vector<Peer*> all = {&provider, &pub};
  for (int i = 0; i < kSubscribers; ++i) {
    subs.push_back(std::make_unique<Peer>());
    Peer& s = *subs.back();
    ASSERT_TRUE(s.connect(edge.port(), "sub-" + std::to_string(i)));
    ASSERT_TRUE(s.subscribe("AG/>"));
    ASSERT_TRUE(s.subscribe("SVC/IBM"));
    all.push_back(&s);
  }
  auto served = [&] {
    for (auto& s : subs) {
      if (s->last("AG/X") != 1 || s->last("SVC/IBM") != 7) return false;
    }
    return true;
  };
  ASSERT_TRUE(poll_until(all, served)) << "not every edge subscriber got AG/X and SVC/IBM";
  EXPECT_EQ(requests, 1) << "the core's provider was asked once for the edge's " << kSubscribers << " subscribers";
  // The core's provider says STALE, then OK: every edge subscriber hears both.
  ASSERT_TRUE(provider.c.stream_status(stream, wire::ChannelState::Stale, wire::Code::Ok, "feed hiccup"));
  ASSERT_TRUE(poll_until(all, [&] {
    for (auto& s : subs) {
      if (!s->saw_state("SVC/IBM", wire::ChannelState::Stale)) return false;
    }
    return true;
  })) << "the core provider's STALE did not reach the edge's subscribers";
  ASSERT_TRUE(provider.c.stream_status(stream, wire::ChannelState::Ok, wire::Code::Ok, ""));
  ASSERT_TRUE(poll_until(all, [&] {
    for (auto& s : subs) {
      if (!s->saw_state("SVC/IBM", wire::ChannelState::Ok)) return false;
    }
    return true;
  })) << "the core provider's OK did not reach the edge's subscribers";
  EXPECT_EQ(link_subscriptions_on(core, "to-core"), 2) << "one upstream subscription per pattern";

  const testing::RunResult cli = testing::run_to_completion(
      testing::bin_path("tickwire"), {"links", "--http", "127.0.0.1:" + std::to_string(edge.http_port())});
  EXPECT_NE(cli.out.find("to-core"), std::string::npos) << cli.out << cli.err;
  EXPECT_NE(cli.out.find("yes"), std::string::npos) << cli.out;
  // `tickwire top` shows the link too: its row, up, with the upstream's address.
  const testing::RunResult top = testing::run_to_completion(
      testing::bin_path("tickwire"), {"top", "--once", "--http", "127.0.0.1:" + std::to_string(edge.http_port())});
  ASSERT_TRUE(top.status.clean()) << top.err;
  const size_t row = top.out.find("\nto-core ");
  ASSERT_NE(row, std::string::npos) << top.out;
  const std::string line = top.out.substr(row + 1, top.out.find('\n', row + 1) - row - 1);
  EXPECT_NE(line.find(" yes "), std::string::npos) << line;
  EXPECT_NE(line.find("127.0.0.1:" + std::to_string(core.port())), std::string::npos) << line;

  // The last local interest gone, the upstream subscriptions go after the linger.
  subs.clear();
  all = {&provider, &pub};
  EXPECT_TRUE(poll_until(all, [&] { return link_subscriptions_on(core, "to-core") == 0; }))
      << "the link kept its upstream subscriptions after the last edge subscriber left";
}

// The core goes away: the edge's subscribers see STALE; a core back on the
// same address: fresh images, then OK, then updates with no gap.
TEST(It31Links, LinkLossTurnsChannelsStaleAndRecoveryBringsFreshImages) {
  const uint16_t core_port = testing::pick_free_port();
  auto core = std::make_unique<BrokerProcess>(broker_with("", core_port));
  ASSERT_TRUE(core->ready()) << core->err();
  BrokerProcess edge(broker_with(link_to("to-core", {core_port})));
  ASSERT_TRUE(edge.ready()) << edge.err();
  BrokerProcess edge2(broker_with(link_to("to-edge", {edge.port()})));
  ASSERT_TRUE(edge2.ready()) << edge2.err();

  auto pub = std::make_unique<Peer>();
  Peer sub, sub2;
  ASSERT_TRUE(pub->connect(core_port, "pub") && pub->publish("LL/A", 1, /*image=*/true));
  ASSERT_TRUE(sub.connect(edge.port(), "sub") && sub.subscribe("LL/>"));
  ASSERT_TRUE(sub2.connect(edge2.port(), "sub2") && sub2.subscribe("LL/>"));
  ASSERT_TRUE(poll_until({pub.get(), &sub, &sub2}, [&] { return sub.last("LL/A") == 1 && sub2.last("LL/A") == 1; }))
      << "no image through the links";

  core->send_signal(SIGKILL);
  core->wait(5000);
  core.reset();
  pub.reset();
  ASSERT_TRUE(poll_until({&sub, &sub2}, [&] {
    return sub.saw_state("LL/A", wire::ChannelState::Stale) && sub2.saw_state("LL/A", wire::ChannelState::Stale);
  })) << "a subscriber on the edge or two hops away did not see STALE when the core was lost";

  sub.got.clear();
  sub2.got.clear();
  BrokerProcess core2(broker_with("", core_port));
  ASSERT_TRUE(core2.ready()) << core2.err();
  Peer pub2;
  ASSERT_TRUE(pub2.connect(core_port, "pub2") && pub2.publish("LL/A", 2, /*image=*/true));
  ASSERT_TRUE(poll_until({&pub2, &sub, &sub2}, [&] {
    return sub.saw_state("LL/A", wire::ChannelState::Ok) && sub2.saw_state("LL/A", wire::ChannelState::Ok);
  })) << "no OK after the link came back";
  ASSERT_TRUE(pub2.publish("LL/A", 3));
  ASSERT_TRUE(poll_until({&pub2, &sub, &sub2}, [&] { return sub.last("LL/A") == 3 && sub2.last("LL/A") == 3; }))
      << "no update after recovery";
  for (Peer* p : {&sub, &sub2}) {
    SCOPED_TRACE(p == &sub ? "edge" : "edge2");
    const std::vector<Got>& got = p->got["LL/A"];
    ASSERT_GE(got.size(), 3u);
    EXPECT_EQ(got[0].kind, client::MessageKind::Image) << "a fresh image first";
    EXPECT_EQ(got[0].value, 2);
    EXPECT_EQ(got[1].kind, client::MessageKind::Status);
    EXPECT_EQ(got[1].state, wire::ChannelState::Ok);
    EXPECT_EQ(got[2].kind, client::MessageKind::Update);
    EXPECT_FALSE(got[2].gap);
  }
}

std::string hash(const std::string& password) {
  auto h = auth::hash_password(password, auth::HashCost{1, 1024, 1});  // cheap: tests only
  return h ? *h : std::string();
}

std::string user(const std::string& name, const std::string& allow, const std::string& topics) {
  return "[users." + name + "]\npassword = \"" + hash(name + "-pw") + "\"\n[[users." + name +
         ".rule]]\nallow = [\"" + allow + "\"]\ntopics = [" + topics + "]\n";
}

// The core grants the link's user EN/OPEN/> only; the edge grants alice
// EN/OPEN/A only. Neither gets more through the link.
// Provider failover across brokers: a service provided on two cores, an edge
// linked to both (its upstream list). The core the edge uses is lost: the
// edge's subscriber sees STALE, then the other core's provider is asked and
// its image arrives, then OK, and its updates follow with no gap.
TEST(It31Links, AServiceProvidedOnTwoCoresFailsOverThroughTheEdgesLink) {
  BrokerProcess core_a(broker_with(""));
  ASSERT_TRUE(core_a.ready()) << core_a.err();
  BrokerProcess core_b(broker_with(""));
  ASSERT_TRUE(core_b.ready()) << core_b.err();
  // Core A first in the edge's list: the link starts there, and fails over to core B.
  BrokerProcess edge(broker_with(link_to("to-cores", {core_a.port(), core_b.port()})));
  ASSERT_TRUE(edge.ready()) << edge.err();

  // Each core's provider answers a request with its own value: 1 on core A, 2 on core B.
  struct Provider {
    Peer peer;
    int requests = 0;
    uint32_t stream = 0;
    bool start(uint16_t port, const std::string& name, int64_t value) {
      if (!peer.connect(port, name)) return false;
      return static_cast<bool>(peer.c.provide(
          "FO", "",
          [this, value](const client::Stream& s) {
            ++requests;
            stream = s.id;
            (void)peer.c.publish_stream(s.id, testing::field_list({{1, value}}), true);
          },
          [](const client::Stream&) {}));
    }
  };
  auto on_a = std::make_unique<Provider>();
  Provider on_b;
  ASSERT_TRUE(on_a->start(core_a.port(), "provider-a", 1));
  ASSERT_TRUE(on_b.start(core_b.port(), "provider-b", 2));
  Peer sub;
  ASSERT_TRUE(sub.connect(edge.port(), "sub") && sub.subscribe("FO/IBM"));
  std::vector<Peer*> all = {&on_a->peer, &on_b.peer, &sub};
  ASSERT_TRUE(poll_until(all, [&] { return sub.last("FO/IBM") == 1; })) << "core A's provider did not answer";
  EXPECT_EQ(on_b.requests, 0) << "the edge asked both cores";

  core_a.send_signal(SIGKILL);
  core_a.wait(5000);
  all = {&on_b.peer, &sub};
  // What the subscriber got after core A's STALE (the failover can be quick: all of it in one poll).
  auto after_stale = [&] {
    const std::vector<Got>& got = sub.got["FO/IBM"];
    auto stale = std::find_if(got.begin(), got.end(), [](const Got& g) {
      return g.kind == client::MessageKind::Status && g.state == wire::ChannelState::Stale;
    });
    return stale == got.end() ? std::vector<Got>{} : std::vector<Got>(stale + 1, got.end());
  };
  auto ok_after_stale = [&] {
    const std::vector<Got> after = after_stale();
    return std::any_of(after.begin(), after.end(), [](const Got& g) {
      return g.kind == client::MessageKind::Status && g.state == wire::ChannelState::Ok;
    });
  };
  ASSERT_TRUE(poll_until(all, [&] { return sub.saw_state("FO/IBM", wire::ChannelState::Stale); }))
      << "the edge's subscriber did not see STALE when core A was lost";
  ASSERT_TRUE(poll_until(all, ok_after_stale)) << "no OK after the link failed over to core B";
  EXPECT_EQ(on_b.requests, 1) << "core B's provider was not asked, or was asked twice";
  ASSERT_TRUE(on_b.peer.c.publish_stream(on_b.stream, testing::field_list({{1, int64_t{3}}}), false));
  ASSERT_TRUE(poll_until(all, [&] { return sub.last("FO/IBM") == 3; })) << "core B's update did not arrive";
  const std::vector<Got> got = after_stale();
  ASSERT_GE(got.size(), 3u);
  EXPECT_EQ(got[0].kind, client::MessageKind::Image) << "core B's image first";
  EXPECT_EQ(got[0].value, 2);
  EXPECT_EQ(got[1].kind, client::MessageKind::Status);
  EXPECT_EQ(got[1].state, wire::ChannelState::Ok);
  EXPECT_EQ(got.back().kind, client::MessageKind::Update);
  EXPECT_FALSE(got.back().gap);
  on_a.reset();
}

TEST(It31Links, EntitlementsHoldOnBothSidesOfALink) {
  testing::TempDir dir;
  const std::string core_users = user("feed", "publish", "\"EN/>\"") + user("edge", "subscribe", "\"EN/OPEN/>\"");
  const std::string edge_users = user("linkpub", "publish", "\">\"") + user("bob", "subscribe", "\"EN/>\"") +
                                 user("alice", "subscribe", "\"EN/OPEN/A\"");
  BrokerProcess core(broker_with("auth_file = \"" + dir.write("core.toml", core_users) + "\"\n"));
  ASSERT_TRUE(core.ready()) << core.err();
  BrokerProcess edge(broker_with("auth_file = \"" + dir.write("edge.toml", edge_users) + "\"\n" +
                                 link_to("to-core", {core.port()}) + "user = \"edge\"\npassword_file = \"" +
                                 dir.write("edge.pw", "edge-pw\n") + "\"\nlocal_user = \"linkpub\"\n" +
                                 "local_password_file = \"" + dir.write("linkpub.pw", "linkpub-pw\n") + "\"\n"));
  ASSERT_TRUE(edge.ready()) << edge.err();

  Peer feed, bob, alice;
  ASSERT_TRUE(feed.connect(core.port(), "feed", "feed", "feed-pw"));
  for (const char* topic : {"EN/OPEN/A", "EN/OPEN/B", "EN/SECRET/X"}) ASSERT_TRUE(feed.publish(topic, 1, true));
  ASSERT_TRUE(bob.connect(edge.port(), "bob", "bob", "bob-pw"));
  ASSERT_TRUE(alice.connect(edge.port(), "alice", "alice", "alice-pw"));
  // bob may see EN/SECRET/X on the edge, but the link's user may not on the core.
  ASSERT_TRUE(bob.subscribe("EN/SECRET/X"));
  ASSERT_TRUE(bob.subscribe("EN/>"));
  ASSERT_TRUE(alice.subscribe("EN/>"));
  const std::vector<Peer*> all = {&feed, &bob, &alice};
  ASSERT_TRUE(poll_until(all, [&] { return bob.last("EN/OPEN/A") == 1 && bob.last("EN/OPEN/B") == 1; }))
      << "bob did not get what the link may carry";
  ASSERT_TRUE(poll_until(all, [&] { return alice.last("EN/OPEN/A") == 1; })) << "alice did not get EN/OPEN/A";
  // A last round trip through both brokers, after which anything EN/SECRET/X would have arrived.
  ASSERT_TRUE(feed.publish("EN/OPEN/A", 2));
  ASSERT_TRUE(poll_until(all, [&] { return bob.last("EN/OPEN/A") == 2 && alice.last("EN/OPEN/A") == 2; }));
  EXPECT_EQ(bob.got.count("EN/SECRET/X"), 0u) << "the link carried more than its user's grant";
  EXPECT_EQ(alice.got.count("EN/OPEN/B"), 0u) << "alice got what her own user may not see on the edge";
  EXPECT_EQ(alice.got.count("EN/SECRET/X"), 0u);
}

// The link's own dropped messages on the core (policy drop), -1 when not connected.
int64_t link_dropped_on(const BrokerProcess& core, const std::string& link) {
  const Json j = admin_get(core, "/api/v1/connections");
  if (!j.is_object() || !j.contains("connections")) return -1;
  for (const Json& c : j["connections"]) {
    if (c.value("client", "") == "link:" + link) return c.value("dropped_messages", int64_t{-1});
  }
  return -1;
}

// A real gap upstream: the core drops messages for the edge's link (policy
// drop, a small output bound) while the edge is stopped. The edge's link
// says STALE and subscribes afresh: a subscriber two hops away sees STALE,
// then a fresh IMAGE with the latest value, then OK (each hop renumbers, so
// without this it would see no gap at all).
TEST(It31Links, AnUpstreamGapReachesASubscriberTwoHopsAwayAsStaleThenAFreshImage) {
  BrokerOptions core_options = broker_with("slow_consumer_policy = \"drop\"\n[limits]\nmax_output_buffer = 65536\n");
  BrokerProcess core(core_options);
  ASSERT_TRUE(core.ready()) << core.err();
  BrokerProcess edge(broker_with(link_to("to-core", {core.port()})));
  ASSERT_TRUE(edge.ready()) << edge.err();
  BrokerProcess edge2(broker_with(link_to("to-edge", {edge.port()})));
  ASSERT_TRUE(edge2.ready()) << edge2.err();

  Peer pub, sub2;
  ASSERT_TRUE(pub.connect(core.port(), "pub") && pub.publish("GP/A", 0, /*image=*/true));
  ASSERT_TRUE(sub2.connect(edge2.port(), "sub2") && sub2.subscribe("GP/>"));
  ASSERT_TRUE(poll_until({&pub, &sub2}, [&] { return sub2.last("GP/A") == 0; })) << "no image through the links";

  // Big updates fill the socket buffers quickly; the core drops past its bound.
  const std::string filler(8192, 'x');
  auto update = [&](int64_t value) {
    return testing::field_list({{1, value}, {2, filler}});
  };
  edge.send_signal(SIGSTOP);
  int64_t value = 0;
  const auto deadline = Clock::now() + std::chrono::milliseconds(testing::kDefaultTimeoutMs);
  while (link_dropped_on(core, "to-core") <= 0 && Clock::now() < deadline) {
    for (int i = 0; i < 100; ++i) {
      if (pub.c.publish("GP/A", update(value + 1), false)) ++value;
      else pub.c.poll(1);
    }
    (void)pub.c.flush();
  }
  const int64_t dropped = link_dropped_on(core, "to-core");
  edge.send_signal(SIGCONT);
  ASSERT_GT(dropped, 0) << "the core dropped nothing for the stopped link";
  ASSERT_TRUE(pub.c.publish("GP/A", update(++value), false));
  ASSERT_TRUE(poll_until({&pub, &sub2}, [&] { return sub2.last("GP/A") == value && sub2.saw_state("GP/A", wire::ChannelState::Ok); }))
      << "the last value or OK did not reach two hops away";

  // STALE, later an IMAGE (the refresh), later OK.
  const std::vector<Got>& got = sub2.got["GP/A"];
  size_t stale = got.size(), image = got.size(), ok = got.size();
  for (size_t i = 1; i < got.size(); ++i) {
    if (stale == got.size() && got[i].kind == client::MessageKind::Status && got[i].state == wire::ChannelState::Stale) stale = i;
    if (stale < i && image == got.size() && got[i].kind == client::MessageKind::Image) image = i;
    if (image < i && ok == got.size() && got[i].kind == client::MessageKind::Status && got[i].state == wire::ChannelState::Ok) ok = i;
  }
  EXPECT_LT(stale, got.size()) << "two hops away, no STALE for the upstream gap";
  EXPECT_LT(image, got.size()) << "no fresh IMAGE after the STALE";
  EXPECT_LT(ok, got.size()) << "no OK after the fresh IMAGE";
  EXPECT_GE(admin_get(edge, "/api/v1/links")["links"][0].value("gaps", int64_t{0}), 1);
}

// Publishing toward the core: a publisher on the edge (publish_upstream =
// ["FEED/>"]) reaches subscribers on the core, on the edge and two hops
// away (edge2, linked to the edge), each getting the image then every update
// once, in order: the edge's link subscribes FEED/> on the core for the
// edge's subscriber too, and the core's echo of what the edge published
// must not come back into the edge as a second publisher.
TEST(It31Links, AnEdgePublishesTowardTheCoreAndNothingEchoesBack) {
  BrokerProcess core(broker_with(""));
  ASSERT_TRUE(core.ready()) << core.err();
  BrokerProcess edge(broker_with(link_to("to-core", {core.port()}) + "publish_upstream = [\"FEED/>\"]\n"));
  ASSERT_TRUE(edge.ready()) << edge.err();
  BrokerProcess edge2(broker_with(link_to("to-edge", {edge.port()})));
  ASSERT_TRUE(edge2.ready()) << edge2.err();

  Peer pub, on_core, on_edge, on_edge2;
  ASSERT_TRUE(on_core.connect(core.port(), "sub-core") && on_core.subscribe("FEED/>"));
  ASSERT_TRUE(on_edge.connect(edge.port(), "sub-edge") && on_edge.subscribe("FEED/>"));
  ASSERT_TRUE(on_edge2.connect(edge2.port(), "sub-edge2") && on_edge2.subscribe("FEED/>"));
  ASSERT_TRUE(pub.connect(edge.port(), "pub-edge") && pub.publish("FEED/X", 0, /*image=*/true));
  const std::vector<Peer*> all = {&pub, &on_core, &on_edge, &on_edge2};
  auto everyone_has = [&](int64_t value) {
    return on_core.last("FEED/X") == value && on_edge.last("FEED/X") == value && on_edge2.last("FEED/X") == value;
  };
  ASSERT_TRUE(poll_until(all, [&] { return everyone_has(0); })) << "the edge's image did not reach every broker";

  constexpr int64_t kUpdates = 30;
  for (int64_t i = 1; i <= kUpdates; ++i) ASSERT_TRUE(pub.publish("FEED/X", i));
  ASSERT_TRUE(poll_until(all, [&] { return everyone_has(kUpdates); })) << "the updates did not reach every broker";
  // An echo would arrive after the original: give it the time a round trip takes.
  ASSERT_TRUE(pub.publish("FEED/X", kUpdates + 1));
  ASSERT_TRUE(poll_until(all, [&] { return everyone_has(kUpdates + 1); }));
  expect_image_then_every_update(on_core, "FEED/X", kUpdates + 1, "core");
  expect_image_then_every_update(on_edge, "FEED/X", kUpdates + 1, "edge");
  expect_image_then_every_update(on_edge2, "FEED/X", kUpdates + 1, "edge2");
  EXPECT_GE(admin_get(edge, "/api/v1/links")["links"][0].value("published_upstream", int64_t{0}), kUpdates + 2);
}

}  // namespace
}  // namespace tw::it
