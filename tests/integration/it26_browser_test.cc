// The broker's web pages in a real browser: Debian's chromium, headless,
// driven by puppeteer-core (tests/js/browser, pinned by its lockfile and
// installed by scripts/js_deps.sh). Each test starts a broker with an HTTP
// listener and a publisher, runs one node script that loads a page and
// checks what a person would see, and keeps the script's screenshot in the
// build folder (it26_*.png, one per thread configuration).
//   examples/web (issue 14, acceptance 3): the demo feed's prices, changing.
//   the console (issue 15, acceptance 2): overview charts moving, a channel
//   page flashing a field change within 1 s.
// The console's links page lists an edge's link to its core, its HA page a
// primary elected by a real etcd. No console errors in any. Skipped only where node or chromium is absent.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "integration/ha_support.h"
#include "testlib/broker_process.h"
#include "testlib/process.h"

namespace tw::it {
namespace {

using testing::BrokerOptions;
using testing::BrokerProcess;
using testing::Process;

const std::string kBrowserDir = TW_IT26_BROWSER_DIR;  // tests/js/browser
const std::string kSourceDir = TW_IT26_SOURCE_DIR;
const std::string kScreenshotDir = TW_IT26_SCREENSHOT_DIR;

std::string thread_label() {
  const char* t = std::getenv("TW_TEST_THREADS");
  std::string label = t && *t ? std::string("_threads_") + t : "";
  for (char& c : label) c = c == '+' ? '_' : c;
  return label;
}

std::string which(const std::string& program) {
  for (const char* dir : {"/usr/local/bin", "/usr/bin", "/bin"}) {
    const std::string path = std::string(dir) + "/" + program;
    if (::access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

class BrowserTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    node_ = which("node");
    if (node_.empty() || which("chromium").empty()) return;
    // npm ci of the pinned puppeteer-core when node_modules is missing or
    // stale; under a lock, since ctest may start several of these at once.
    Process deps("/usr/bin/flock", {kScreenshotDir + "/it26_js_deps.lock", "/bin/bash",
                                    kSourceDir + "/scripts/js_deps.sh", "tests/js/browser"});
    const auto status = deps.wait(300'000);
    deps_ok_ = status && status->clean();
    if (!deps_ok_) deps_error_ = deps.out() + deps.err();
  }

  void SetUp() override {
    if (node_.empty() || which("chromium").empty()) GTEST_SKIP() << "node or chromium is not installed";
    ASSERT_TRUE(deps_ok_) << "scripts/js_deps.sh tests/js/browser failed:\n" << deps_error_;
    BrokerOptions options;
    options.args = {"--http-listen", "127.0.0.1:0"};
    broker_ = std::make_unique<BrokerProcess>(options);
    ASSERT_TRUE(broker_->ready()) << broker_->err();
    http_port_ = broker_->http_port();
    ASSERT_NE(http_port_, 0) << "the port file names the HTTP listener's port";
  }

  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(http_port_) + path; }
  std::string server() const { return "127.0.0.1:" + std::to_string(broker_->port()); }
  std::unique_ptr<Process> cli(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--server", server()});
    return std::make_unique<Process>(testing::bin_dir() + "/tickwire", args);
  }

  // Runs one browser script; it prints a line per check and exits 0 when all held.
  void run_script(const std::string& script, std::vector<std::string> args) {
    args.insert(args.begin(), kBrowserDir + "/" + script);
    Process node(node_, args);
    const auto status = node.wait(30'000);
    EXPECT_TRUE(status && status->clean()) << script << " " << (status ? describe(*status) : "still running after 30 s")
                                           << "\n" << node.out() << node.err();
  }
  // build/it26_NAME[_threads_G_A]: one file, or the prefix of a script's several.
  std::string screenshot(const std::string& name, const char* suffix = ".png") const {
    return kScreenshotDir + "/it26_" + name + thread_label() + suffix;
  }

  static inline std::string node_;
  static inline bool deps_ok_ = false;
  static inline std::string deps_error_;
  uint16_t http_port_ = 0;
  std::unique_ptr<BrokerProcess> broker_;
};

TEST_F(BrowserTest, TheExamplePageShowsTheDemoFeedsPricesChanging) {
  // What scripts/run.sh starts beside the broker, at a rate that moves every row often.
  auto feed = cli({"demo-feed", "--symbols", "20", "--rate", "400", "--seconds", "30"});
  run_script("examples_web.mjs", {"--url", url("/examples/web/"), "--screenshot", screenshot("examples_web")});
  EXPECT_TRUE(feed->alive()) << feed->err();
}

TEST_F(BrowserTest, TheConsoleChartsMoveAndAChannelPageFlashesAFieldChangeWithinASecond) {
  auto feed = cli({"demo-feed", "--symbols", "20", "--rate", "400", "--seconds", "30"});
  // The channel page's topic has no other publisher than the test: a change there is the test's.
  const std::string topic = "IT26/QUOTE";
  auto first = cli({"pub", topic, "-f", "BID=100.00", "-f", "ASK=100.50", "-f", "DSPLY_NAME=IT26"});
  const auto published = first->wait(10'000);
  ASSERT_TRUE(published && published->clean()) << first->err();
  run_script("console.mjs", {"--base", url(""), "--tickwire", testing::bin_dir() + "/tickwire", "--server", server(),
                             "--topic", topic, "--screenshots", screenshot("console", "_")});
  EXPECT_TRUE(feed->alive()) << feed->err();
}

// An edge broker linked to a core (issue 31, item 6): the console's links page lists the link, up.
TEST_F(BrowserTest, TheConsoleLinksPageShowsALinkUpWithItsUpstream) {
  BrokerOptions core_options;
  core_options.config_toml = "mqtt_listen = \"\"\n";
  BrokerProcess core(core_options);
  ASSERT_TRUE(core.ready()) << core.err();
  const std::string upstream = "127.0.0.1:" + std::to_string(core.port());
  BrokerOptions edge_options;
  edge_options.args = {"--http-listen", "127.0.0.1:0"};
  edge_options.config_toml = "mqtt_listen = \"\"\n[[link]]\nname = \"to-core\"\nupstreams = [\"" + upstream + "\"]\n";
  BrokerProcess edge(edge_options);
  ASSERT_TRUE(edge.ready()) << edge.err();
  run_script("table_page.mjs", {"--base", "http://127.0.0.1:" + std::to_string(edge.http_port()), "--page", "links",
                                "--row", "to-core", "--expect", "Up=yes;Upstream=" + upstream, "--screenshot",
                                screenshot("console_links")});
}

// A broker with a store and a queue holding three messages (issue 28, item 6): the console's queues page shows it.
TEST_F(BrowserTest, TheConsoleQueuesPageShowsAQueuesDepth) {
  testing::TempDir store;
  BrokerOptions options;
  options.args = {"--http-listen", "127.0.0.1:0"};
  options.config_toml = "mqtt_listen = \"\"\n[store]\ndir = \"" + store.path() +
                        "/q\"\n[[queue]]\nname = \"orders\"\nsubscriptions = [\"ORD/>\"]\n";
  BrokerProcess broker(options);
  ASSERT_TRUE(broker.ready()) << broker.err();
  Process pub(testing::bin_dir() + "/tickwire", {"--server", "127.0.0.1:" + std::to_string(broker.port()), "pub",
                                                 "ORD/A", "--guaranteed", "-d", "x", "-n", "3"});
  const auto published = pub.wait(10'000);
  ASSERT_TRUE(published && published->clean()) << pub.err();
  run_script("table_page.mjs", {"--base", "http://127.0.0.1:" + std::to_string(broker.http_port()), "--page",
                                "queues", "--row", "orders", "--expect", "Subscriptions=ORD/>;Depth=3;Consumers=0",
                                "--screenshot", screenshot("console_queues")});
}

// A broker elected primary by a real etcd (issue 30, item 6): the console's HA page says so.
TEST_F(BrowserTest, TheConsoleHaPageShowsAPrimaryItsEpochAndThatItAcknowledges) {
  ASSERT_TRUE(testing::EtcdServer::installed()) << "etcd-server is not installed (scripts/deps.sh)";
  testing::EtcdServer etcd;
  ASSERT_TRUE(etcd.ok()) << etcd.log();
  testing::TempDir store;
  auto member = start_member(etcd, store);
  ASSERT_TRUE(member->ready()) << member->err();
  const std::string name = "127.0.0.1:" + std::to_string(member->port());
  run_script("table_page.mjs", {"--base", "http://127.0.0.1:" + std::to_string(member->http_port()), "--page", "ha",
                                "--row", name, "--expect", "Role=primary;Serving=yes;Acknowledging=yes;Primary=" + name,
                                "--screenshot", screenshot("console_ha")});
}

}  // namespace
}  // namespace tw::it
