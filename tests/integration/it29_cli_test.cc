// Issue 29, item 7 and the CLI's missing features: `tickwire top` finds the
// admin API on the --server host, fits its terminal and quits on q (run on a
// pseudo-terminal by it29_top_pty.py), `top --once` shows rates; `tickwire
// pub` publishes the lines of stdin; `--name` is the client name in HELLO.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include <nlohmann/json.hpp>

#include "admin/http_client.h"
#include "integration/it_support.h"

namespace tw::it {
namespace {

using Json = nlohmann::json;
using testing::bin_path;
using testing::Process;
using testing::run_to_completion;

constexpr int kWaitMs = testing::kDefaultTimeoutMs;  // a safety net, never a performance bound
const std::string kPython = "/usr/bin/python3";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

BrokerOptions with_http(const std::string& address = "127.0.0.1:0") {
  BrokerOptions options;
  options.args = {"--http-listen", address};
  return options;
}

admin::HttpTarget http_of(const BrokerProcess& broker) {
  admin::HttpTarget t;
  t.port = broker.http_port();
  return t;
}

// POSTs a JSON field list (REST publish): a channel to see in the views.
void rest_publish(const admin::HttpTarget& t, const std::string& topic) {
  auto posted = admin::http_request(t, "POST", "/api/v1/publish/" + topic, R"({"BID":1})", "application/json");
  ASSERT_TRUE(posted.ok() && posted->status == 200) << topic << ": " << (posted ? posted->body : "no answer");
}

std::string server_of(const BrokerProcess& broker) { return "127.0.0.1:" + std::to_string(broker.port()); }

// --- top ------------------------------------------------------------------

// A loopback address of its own (127.29.x.y, from the pid), so that the
// broker's admin listener can take the default port 9401 beside any other.
std::string own_loopback_host() {
  const unsigned pid = static_cast<unsigned>(::getpid());
  return "127.29." + std::to_string((pid >> 8) % 250 + 1) + "." + std::to_string(pid % 250 + 2);
}

TEST(It29Top, FindsTheAdminApiOnTheServersHostAtPort9401) {
  const std::string host = own_loopback_host();
  BrokerProcess broker(with_http(host + ":9401"));
  ASSERT_TRUE(broker.ready()) << broker.err();
  const std::string topic = "IT29/TOP/" + std::to_string(::getpid());  // only this broker has it
  admin::HttpTarget t;
  t.host = host;
  ASSERT_NO_FATAL_FAILURE(rest_publish(t, topic));
  // --server's host (the native port is whatever it is: top asks port 9401 there) ...
  auto flag = run_to_completion(bin_path("tickwire"), {"-s", host + ":" + std::to_string(broker.port()), "top",
                                                       "--once"});
  ASSERT_TRUE(flag.status.clean()) << testing::describe(flag.status) << ": " << flag.err;
  EXPECT_TRUE(contains(flag.out, topic)) << flag.out;
  // ... and $TICKWIRE_SERVER's.
  auto env = run_to_completion("/usr/bin/env", {"TICKWIRE_SERVER=" + host + ":9400", bin_path("tickwire"), "top",
                                                "--once"});
  ASSERT_TRUE(env.status.clean()) << testing::describe(env.status) << ": " << env.err;
  EXPECT_TRUE(contains(env.out, topic)) << env.out;
}

TEST(It29Top, WithNoAdminListenerThereTheErrorSaysWhereItAskedAndHowToSayElse) {
  const std::string host = own_loopback_host();
  auto r = run_to_completion(bin_path("tickwire"), {"-s", host + ":9400", "top", "--once"});
  EXPECT_EQ(r.status.code, 2);
  EXPECT_TRUE(contains(r.err, host + ":9401")) << r.err;
  EXPECT_TRUE(contains(r.err, "--http HOST:PORT")) << r.err;
}

// "msgs in 500/s" -> 500; -1 when the line is not there.
double msgs_in_rate(const std::string& view) {
  const size_t at = view.find("msgs in ");
  if (at == std::string::npos) return -1;
  return std::strtod(view.c_str() + at + 8, nullptr);
}

TEST(It29Top, OnceShowsTheRatesOfTheSecondItWatched) {
  BrokerProcess broker(with_http());
  ASSERT_TRUE(broker.ready()) << broker.err();
  // A steady publisher (the broker's first statistics sample is top's own: no earlier reader).
  Process feed(bin_path("tickwire"), {"-s", server_of(broker), "pub", "IT29/RATE", "-f", "BID=1", "-n", "100000000",
                                      "-r", "200"});
  const admin::HttpTarget t = http_of(broker);
  bool flowing = false;
  for (int i = 0; i < kWaitMs / 20 && !flowing; ++i) {
    auto snap = admin::http_request(t, "GET", "/api/v1/snapshot/IT29/RATE");
    flowing = snap.ok() && snap->status == 200;
    if (!flowing) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(flowing) << feed.err();
  auto top = run_to_completion(bin_path("tickwire"),
                               {"top", "--once", "--http", "127.0.0.1:" + std::to_string(broker.http_port())});
  ASSERT_TRUE(top.status.clean()) << top.err;
  EXPECT_GT(msgs_in_rate(top.out), 0) << top.out;
}

TEST(It29Top, QuitsOnQAndFitsAnEightyByTwentyFourTerminal) {
  BrokerProcess broker(with_http());
  ASSERT_TRUE(broker.ready()) << broker.err();
  const admin::HttpTarget t = http_of(broker);
  // More channels than 24 lines hold, and the connections list (wider than 80 columns).
  for (int i = 0; i < 40; ++i) ASSERT_NO_FATAL_FAILURE(rest_publish(t, "IT29/FIT/" + std::to_string(i)));
  RawClient sub;
  ASSERT_TRUE(open_client(sub, broker.port(), "it29-a-subscriber-with-a-rather-long-client-name"));
  auto run = run_to_completion(kPython,
                               {TW_IT29_TOP_PTY, bin_path("tickwire"), "top", "--http",
                                "127.0.0.1:" + std::to_string(broker.http_port()), "--rows", "100", "--interval",
                                "600000"},
                               4 * kWaitMs);
  EXPECT_TRUE(run.status.clean()) << run.out << run.err;
  EXPECT_TRUE(contains(run.out, "ok top")) << run.out << run.err;
}

// --- pub from stdin, --name ------------------------------------------------

class It29Pub : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(broker_.ready()) << broker_.err(); }
  // `tickwire -s BROKER pub ARGS < FILE` holding `lines`.
  testing::RunResult pub_from(const std::string& lines, const std::string& args) {
    const std::string file = dir_.write("lines", lines);
    return run_to_completion("/bin/sh", {"-c", bin_path("tickwire") + " -s " + server_of(broker_) + " pub " + args +
                                                   " < " + file});
  }
  Json snapshot(const std::string& topic) {
    auto r = run_to_completion(bin_path("tickwire"), {"-s", server_of(broker_), "snapshot", topic, "--json"});
    if (!r.status.clean()) return Json();
    return Json::parse(r.out, nullptr, false);
  }
  BrokerProcess broker_{with_http()};
  testing::TempDir dir_;
};

TEST_F(It29Pub, EachLineOfStdinIsAFieldListMessage) {
  auto r = pub_from("BID=189.25 ASK=189.27\n# a comment\n\nBID=190 DSPLY_NAME=\"two words\"\r\nASK=191", "IT29/LINES");
  ASSERT_TRUE(r.status.clean()) << testing::describe(r.status) << ": " << r.err;
  EXPECT_TRUE(contains(r.out, "published 3 messages to IT29/LINES (seq=3)")) << r.out;
  const Json image = snapshot("IT29/LINES");
  EXPECT_EQ(image["fields"]["BID"], "190") << image.dump();
  EXPECT_EQ(image["fields"]["ASK"], "191") << image.dump();
  EXPECT_EQ(image["fields"]["DSPLY_NAME"], "two words") << image.dump();
}

TEST_F(It29Pub, JsonLinesAsSubJsonPrintsThem) {
  // An image, a status line (skipped), an update and a bare object.
  const std::string lines =
      R"({"type":"image","topic":"X","channel":1,"seq":1,"fields":{"BID":"7","ASK":"8"}})"
      "\n"
      R"({"type":"status","topic":"X","channel":1,"state":"STALE","code":"OK","text":""})"
      "\n"
      R"({"type":"update","topic":"X","channel":1,"seq":2,"fields":{"BID":"7.5"}})"
      "\n"
      R"({"ASK":9})"
      "\n";
  auto r = pub_from(lines, "--json IT29/JSON");
  ASSERT_TRUE(r.status.clean()) << testing::describe(r.status) << ": " << r.err;
  EXPECT_TRUE(contains(r.out, "published 3 messages to IT29/JSON (seq=3)")) << r.out;
  const Json image = snapshot("IT29/JSON");
  EXPECT_EQ(image["fields"]["BID"], "7.5") << image.dump();
  EXPECT_EQ(image["fields"]["ASK"], "9") << image.dump();
}

TEST_F(It29Pub, ABadLineStopsWithItsNumber) {
  auto r = pub_from("BID=1\nNO_SUCH_FIELD=2\nBID=3\n", "IT29/BAD");
  EXPECT_EQ(r.status.code, 2) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "stdin line 2")) << r.err;
  EXPECT_EQ(snapshot("IT29/BAD")["seq"], 1) << "the line before was published, the one after not";
  auto count = pub_from("BID=1\n", "-n 2 IT29/BAD");
  EXPECT_EQ(count.status.code, 2);
  EXPECT_TRUE(contains(count.err, "each line is one message")) << count.err;
}

TEST_F(It29Pub, NameIsTheClientNameTheBrokerShows) {
  Process sub(bin_path("tickwire"), {"--name", "it29-named-client", "-s", server_of(broker_), "sub", "IT29/N"});
  const admin::HttpTarget t = http_of(broker_);
  bool listed = false;
  for (int i = 0; i < kWaitMs / 20 && !listed && sub.alive(); ++i) {
    auto reply = admin::http_request(t, "GET", "/api/v1/connections");
    listed = reply.ok() && contains(reply->body, "\"client\":\"it29-named-client\"");
    if (!listed) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(listed) << sub.err();
}

// Item 3: `sub --delay 900` (the README's) says at once when its stream starts, instead of 15 silent minutes.
TEST_F(It29Pub, ADelayedSubscriberIsToldAtOnceWhenItsStreamStarts) {
  ASSERT_TRUE(pub_from("BID=1\n", "IT29/DELAYED").status.clean());
  Process sub(bin_path("tickwire"), {"-s", server_of(broker_), "sub", "IT29/DELAYED", "--delay", "900"});
  EXPECT_TRUE(sub.wait_for_out("STATUS IT29/DELAYED OK code=DELAY_HISTORY no delayed history yet: the stream as it "
                               "was 900 s ago starts in 900 s",
                               kWaitMs))
      << sub.out() << sub.err();
}

// Item 3, its first half: under [[delay_history]] the broker records a
// channel from its creation, so a subscriber with that delay gets, at once,
// the image as it was then (not the notice that history starts now).
TEST(It29DelayHistory, ASubscriberWithTheHistorysDelayGetsTheImageAsItWasAtOnce) {
  BrokerOptions options;
  options.config_toml = "delay_bucket_ms = 100\n\n[[delay_history]]\ntopics = [\"IT29/H/>\"]\ndelay_s = 2\n";
  BrokerProcess broker(options);
  ASSERT_TRUE(broker.ready()) << broker.err();
  auto pub = [&](const char* field) {
    return run_to_completion(bin_path("tickwire"), {"-s", server_of(broker), "pub", "IT29/H/A", "-f", field});
  };
  ASSERT_TRUE(pub("BID=1").status.clean());
  // Real time must pass for there to be a past: the delay and a bucket, once.
  std::this_thread::sleep_for(std::chrono::milliseconds(2'500));
  ASSERT_TRUE(pub("BID=2").status.clean());
  Process sub(bin_path("tickwire"), {"-s", server_of(broker), "sub", "IT29/H/A", "--delay", "2", "--json"});
  ASSERT_TRUE(sub.wait_for_out("\n", kWaitMs)) << sub.err();
  const std::string first = sub.out().substr(0, sub.out().find('\n'));
  const Json image = Json::parse(first, nullptr, false);
  EXPECT_EQ(image["type"], "image") << first;
  EXPECT_EQ(image["fields"]["BID"], "1") << first;
  EXPECT_TRUE(sub.wait_for_out("\"BID\":\"2\"", kWaitMs)) << sub.out() << sub.err();
  EXPECT_FALSE(contains(sub.out(), "DELAY_HISTORY")) << sub.out();
}

}  // namespace
}  // namespace tw::it
