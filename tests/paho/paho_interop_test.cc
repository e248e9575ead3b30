// The Eclipse Paho MQTT interoperability suites (../shared/mqtt-interop,
// beside the repository; docs/mqtt.md, "Eclipse Paho interoperability
// suites") against a real tickwired: PahoInterop.V311 runs client_test.py,
// PahoInterop.V5 client_test5.py, each against a broker of its own, through
// the suites' own runner (run.sh HOST PORT). Registered twice
// (CMakeLists.txt): single-threaded, and as threads_2_2.PahoInterop.* with
// TW_TEST_THREADS=2+2. The broker is configured as the suites need it:
// tests/paho/users.toml refuses test/nosubscribe to the anonymous user, and
// MQTT 5 keep-alives are capped at 60 s.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "testlib/broker_process.h"
#include "testlib/process.h"

namespace tw::testing {
namespace {

// The tests that pass, at least, and the tests in each suite. Raise a count
// here when a fix makes more pass (docs/mqtt.md lists what still fails and
// why). 5.0 passes 26 of 27 since stored sessions queue their messages on the
// store (test_publication_expiry; only test_subscribe_failure fails), in both
// configurations (in 2+2 too since the publish fence: two of the suite's
// tests publish before the other client's SUBACK came, test_request_response
// and test_subscribe_options, docs/ARCHITECTURE.md). Asserted: the
// issue's bound, one below what passes.
constexpr int kV311Passing = 10;
constexpr int kV311Tests = 10;
constexpr int kV5Passing = 25;
constexpr int kV5PassingTiered = 25;
constexpr int kV5Tests = 27;

// Bounds: one test (the longest that passes, v5 test_session_expiry, takes
// 20 s; one that hangs costs this, and belongs in PAHO_INTEROP_EXCLUDE), and
// each suite (3.1.1 takes 45 s, 5.0 about 130 s on 2 loaded cores).
constexpr int kTestTimeoutS = 30;
constexpr int kV311TimeoutS = 90;
constexpr int kV5TimeoutS = 240;

const std::string kInterop = TW_SOURCE_DIR "/../shared/mqtt-interop";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "v5:test_a v5:test_b ...": every test of `suite` (its file's test methods),
// to leave that suite out of a run of the other.
std::string all_tests_of(const std::string& suite, const std::string& file) {
  const std::string text = read_file(kInterop + "/interoperability/" + file);
  const std::regex method(R"(def (test\w*)\()");
  std::string out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), method); it != std::sregex_iterator(); ++it) {
    out += suite + ":" + (*it)[1].str() + " ";
  }
  return out;
}

struct Count {
  int passed = -1;
  int total = -1;
};

// From run.sh's last line, "paho-interop: v311 P/T passed, v5 P/T passed".
Count count_of(const std::string& out, const std::string& suite) {
  Count c;
  const std::regex line("paho-interop:.*\\b" + suite + " ([0-9]+)/([0-9]+) passed");
  std::smatch m;
  if (std::regex_search(out, m, line)) c = {std::stoi(m[1].str()), std::stoi(m[2].str())};
  return c;
}

void run_suite(const std::string& suite, const std::string& other, const std::string& other_file, int passing,
               int tests) {
  if (access((kInterop + "/run.sh").c_str(), R_OK) != 0) {
    GTEST_SKIP() << kInterop << "/run.sh is absent: the Paho suites are not checked here";
  }
  const uint16_t port = pick_free_port();
  BrokerOptions options;
  // With a store: stored sessions queue their QoS 1 and 2 messages while away (test_publication_expiry).
  TempDir store;
  options.config_toml = "auth_file = \"" TW_SOURCE_DIR "/tests/paho/users.toml\"\nallow_anonymous = true\n"
                        "mqtt_max_keepalive_s = 60\nmqtt_listen = \"127.0.0.1:" + std::to_string(port) + "\"\n"
                        "[store]\ndir = \"" + store.path() + "/store\"\n";
  BrokerProcess broker(options);
  ASSERT_TRUE(broker.ready()) << broker.err();
  const std::string env_args[] = {
      "PAHO_INTEROP_EXCLUDE=" + all_tests_of(other, other_file),
      "PAHO_INTEROP_TEST_TIMEOUT=" + std::to_string(kTestTimeoutS),
      "PAHO_INTEROP_V311_TIMEOUT=" + std::to_string(kV311TimeoutS),
      "PAHO_INTEROP_V5_TIMEOUT=" + std::to_string(kV5TimeoutS),
      "PAHO_INTEROP_LOGDIR=" + broker.dir().file("paho-logs"),
  };
  std::vector<std::string> args(std::begin(env_args), std::end(env_args));
  args.insert(args.end(), {"bash", kInterop + "/run.sh", "127.0.0.1", std::to_string(port)});
  // run.sh's own bound (each suite's limit and 90 s) is the last resort; this one only stops a runaway.
  const RunResult run = run_to_completion("/usr/bin/env", args, (kV311TimeoutS + kV5TimeoutS + 200) * 1000);
  const Count c = count_of(run.out, suite);
  std::cout << run.out;  // what failed and why, and the counts: in the test's log even when it passes
  std::string log = read_file(broker.dir().file("paho-logs/" + suite + ".log"));
  if (log.size() > 20'000) log = "..." + log.substr(log.size() - 20'000);
  EXPECT_EQ(c.total, tests) << run.out << run.err;
  EXPECT_GE(c.passed, passing) << run.out << run.err << "\n--- " << suite << ".log (tail):\n" << log;
  EXPECT_EQ(count_of(run.out, other).total, 0) << run.out;  // the other suite was left out
}

TEST(PahoInterop, V311) { run_suite("v311", "v5", "client_test5.py", kV311Passing, kV311Tests); }

TEST(PahoInterop, V5) {
  const char* threads = std::getenv("TW_TEST_THREADS");
  const bool tiered = threads != nullptr && *threads != '\0';
  run_suite("v5", "v311", "client_test.py", tiered ? kV5PassingTiered : kV5Passing, kV5Tests);
}

}  // namespace
}  // namespace tw::testing
