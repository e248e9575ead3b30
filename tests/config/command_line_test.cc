// The tickwired command line: defaults, then --config FILE, then flags; misuse
// and bad configuration exit 2 with a one-line reason.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "command_line.h"

namespace tw::tickwired {
namespace {

struct Outcome {
  ParsedCommandLine parsed;
  std::string out;
  std::string err;
};

Outcome run_tickwired(std::vector<std::string> args) {
  args.insert(args.begin(), "tickwired");
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  std::ostringstream out;
  std::ostringstream err;
  Outcome result{parse_command_line(static_cast<int>(argv.size()), argv.data(), out, err)};
  result.out = out.str();
  result.err = err.str();
  return result;
}

class ConfigFile {
 public:
  explicit ConfigFile(const std::string& text) {
    char name[] = "/tmp/tw_cli_testXXXXXX";
    int fd = mkstemp(name);
    EXPECT_GE(fd, 0);
    close(fd);
    path_ = name;
    std::ofstream(path_) << text;
  }
  ~ConfigFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(CommandLine, NoArgumentsGiveTheDefaults) {
  Outcome r = run_tickwired({});
  ASSERT_TRUE(r.parsed.invocation.has_value()) << r.err;
  EXPECT_EQ(r.parsed.invocation->config.listen, "127.0.0.1:9400");
  EXPECT_EQ(r.parsed.invocation->config.limits.max_frame, 1u << 20);
  EXPECT_EQ(r.parsed.invocation->port_file, "");
}

TEST(CommandLine, VersionAndHelpPrintAndExitZero) {
  Outcome version = run_tickwired({"--version"});
  EXPECT_FALSE(version.parsed.invocation.has_value());
  EXPECT_EQ(version.parsed.exit_code, kExitOk);
  EXPECT_EQ(version.out, "tickwired " TW_VERSION "\n");

  Outcome help = run_tickwired({"--help"});
  EXPECT_FALSE(help.parsed.invocation.has_value());
  EXPECT_EQ(help.parsed.exit_code, kExitOk);
  for (const char* flag : {"--config", "--listen", "--log-level", "--heartbeat-ms", "--max-frame",
                           "--max-subscriptions", "--max-connections", "--max-output-buffer",
                           "--print-port-file", "--version"}) {
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
  }
}

TEST(CommandLine, MisuseExitsTwoWithUsage) {
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"--no-such-flag"}, {"--max-frame", "big"}, {"--listen"}, {"stray"}}) {
    Outcome r = run_tickwired(args);
    EXPECT_FALSE(r.parsed.invocation.has_value()) << args[0];
    EXPECT_EQ(r.parsed.exit_code, kExitUsage) << args[0];
    EXPECT_EQ(r.err.rfind("tickwired: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("--max-output-buffer"), std::string::npos) << "usage follows: " << r.err;
  }
}

TEST(CommandLine, OutOfRangeFlagNamesTheFlag) {
  Outcome r = run_tickwired({"--max-frame", "10"});
  EXPECT_EQ(r.parsed.exit_code, kExitUsage);
  EXPECT_EQ(r.err, "tickwired: --max-frame: must be between 64 and 1073741824, got 10\n");

  r = run_tickwired({"--heartbeat-ms=-5"});
  EXPECT_EQ(r.parsed.exit_code, kExitUsage);
  EXPECT_EQ(r.err, "tickwired: --heartbeat-ms: must be between 10 and 3600000, got -5\n");

  r = run_tickwired({"--listen", "9400"});
  EXPECT_EQ(r.parsed.exit_code, kExitUsage);
  EXPECT_EQ(r.err.rfind("tickwired: --listen: expected HOST:PORT", 0), 0u) << r.err;

  r = run_tickwired({"--log-level", "chatty"});
  EXPECT_EQ(r.parsed.exit_code, kExitUsage);
  EXPECT_EQ(r.err.rfind("tickwired: --log-level: ", 0), 0u) << r.err;
}

TEST(CommandLine, FlagsOverrideTheFileWhichOverridesDefaults) {
  ConfigFile file(
      "listen = \"0.0.0.0:9500\"\nheartbeat_ms = 2000\nlog_level = \"off\"\n"
      "[limits]\nmax_frame = 4096\nmax_connections = 9\n");
  Outcome r = run_tickwired({"--config", file.path(), "--max-frame", "8192", "--listen", "127.0.0.1:0",
               "--max-output-buffer", "2048",
               "--print-port-file", "/tmp/port"});
  ASSERT_TRUE(r.parsed.invocation.has_value()) << r.err;
  const config::BrokerConfig& c = r.parsed.invocation->config;
  EXPECT_EQ(c.limits.max_frame, 8192u);            // flag over file
  EXPECT_EQ(c.listen, "127.0.0.1:0");               // flag over file
  EXPECT_EQ(c.heartbeat_ms, 2000u);                 // file over default
  EXPECT_EQ(c.log_level, log::Level::Off);          // file over default
  EXPECT_EQ(c.limits.max_connections, 9u);          // file over default
  EXPECT_EQ(c.limits.max_output_buffer, 2048u);     // flag over default
  EXPECT_EQ(c.limits.max_subscriptions, 10'000u);  // default
  EXPECT_EQ(r.parsed.invocation->port_file, "/tmp/port");
}

TEST(CommandLine, BadConfigFileExitsTwoNamingFileLineAndKey) {
  ConfigFile file("listen = \"127.0.0.1:0\"\n[limits]\nmax_fram = 5\n");
  Outcome r = run_tickwired({"--config", file.path()});
  EXPECT_EQ(r.parsed.exit_code, kExitUsage);
  EXPECT_EQ(r.err, "tickwired: " + file.path() + ":3: unknown key 'limits.max_fram'\n");

  r = run_tickwired({"--config", "/nonexistent/broker.toml"});
  EXPECT_EQ(r.parsed.exit_code, kExitUsage);
  EXPECT_EQ(r.err,
            "tickwired: cannot read /nonexistent/broker.toml: No such file or directory\n");
}

}  // namespace
}  // namespace tw::tickwired

namespace tw::tickwired {
namespace {

TEST(CommandLine, SlowConsumerPolicyFlagSetsTheDefaultPolicy) {
  Outcome r = run_tickwired({"--slow-consumer-policy", "drop"});
  ASSERT_TRUE(r.parsed.invocation.has_value()) << r.err;
  EXPECT_EQ(r.parsed.invocation->config.slow_consumer_policy, "drop");
  r = run_tickwired({"--slow-consumer-policy", "block"});
  EXPECT_EQ(r.parsed.exit_code, kExitUsage);
  EXPECT_EQ(r.err.rfind("tickwired: --slow-consumer-policy: expected conflate, drop or disconnect", 0), 0u) << r.err;
}

}  // namespace
}  // namespace tw::tickwired

namespace tw::tickwired {
namespace {

TEST(CommandLine, ThreadFlagsSetGatewaysAccessPointsAndCpus) {
  Outcome r = run_tickwired({"--gateways", "2", "--access-points", "3", "--cpus", "2-7"});
  ASSERT_TRUE(r.parsed.invocation.has_value()) << r.err;
  const config::BrokerConfig& c = r.parsed.invocation->config;
  EXPECT_EQ(c.gateways, 2u);
  EXPECT_EQ(c.access_points, 3u);
  EXPECT_EQ(c.cpus, "2-7");

  Outcome defaults = run_tickwired({});
  ASSERT_TRUE(defaults.parsed.invocation.has_value()) << defaults.err;
  EXPECT_TRUE(config::single_threaded(defaults.parsed.invocation->config));
}

TEST(CommandLine, ThreadsFlagSetsBothCounts) {
  struct Case {
    const char* value;
    uint32_t gateways;
    uint32_t access_points;
  };
  for (Case expected : {Case{"1+1", 1, 1}, Case{"2+2", 2, 2}, Case{"3+1", 3, 1},
                        Case{"64+64", 64, 64}, Case{"0+0", 0, 0}, Case{"single", 0, 0}}) {
    Outcome r = run_tickwired({"--threads", expected.value});
    ASSERT_TRUE(r.parsed.invocation.has_value()) << expected.value << ": " << r.err;
    EXPECT_EQ(r.parsed.invocation->config.gateways, expected.gateways) << expected.value;
    EXPECT_EQ(r.parsed.invocation->config.access_points, expected.access_points)
        << expected.value;
  }
}

TEST(CommandLine, ThreadsFlagOverridesTheFile) {
  ConfigFile file("gateways = 4\naccess_points = 4\n");
  Outcome r = run_tickwired({"--config", file.path(), "--threads", "single"});
  ASSERT_TRUE(r.parsed.invocation.has_value()) << r.err;
  EXPECT_TRUE(config::single_threaded(r.parsed.invocation->config));
}

TEST(CommandLine, BadThreadsFlagIsOneLine) {
  const std::string expected_form = "expected G+A (such as 1+1 or 2+2) or single, got ";
  for (const char* bad : {"2", "x", "1+", "+1", "1+1+1", "one+two", "-1+1", "Single"}) {
    Outcome r = run_tickwired({"--threads", bad});
    EXPECT_EQ(r.parsed.exit_code, kExitUsage) << bad;
    EXPECT_EQ(r.err, "tickwired: --threads: " + expected_form + "'" + bad + "'\n");
  }
  Outcome r = run_tickwired({"--threads", "1+0"});
  EXPECT_EQ(r.parsed.exit_code, kExitUsage);
  EXPECT_EQ(r.err,
            "tickwired: --threads: '1+0': both counts 0 (single-threaded) or both at least 1\n");
  r = run_tickwired({"--threads", "65+1"});
  EXPECT_EQ(r.err, "tickwired: --threads: gateways must be between 0 and 64, got 65\n");
  r = run_tickwired({"--threads", "1+99"});
  EXPECT_EQ(r.err, "tickwired: --threads: access points must be between 0 and 64, got 99\n");
}

TEST(CommandLine, ThreadsFlagExcludesTheCountFlags) {
  Outcome r = run_tickwired({"--threads", "2+2", "--gateways", "1"});
  EXPECT_FALSE(r.parsed.invocation.has_value());
  EXPECT_EQ(r.parsed.exit_code, kExitUsage);
  EXPECT_EQ(r.err.rfind("tickwired: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("--threads"), std::string::npos) << r.err;
}

TEST(CommandLine, InconsistentThreadFlagsNameTheKeys) {
  Outcome r = run_tickwired({"--gateways", "1"});
  EXPECT_EQ(r.parsed.exit_code, kExitUsage);
  EXPECT_EQ(r.err,
            "tickwired: keys 'gateways' and 'access_points': both 0 (single-threaded) or both at "
            "least 1, got gateways = 1, access_points = 0\n");

  r = run_tickwired({"--cpus", "7-2"});
  EXPECT_EQ(r.parsed.exit_code, kExitUsage);
  EXPECT_EQ(r.err, "tickwired: --cpus: '7-2': range runs backwards\n");

  r = run_tickwired({"--threads", "2+2", "--cpus", "0,2"});
  EXPECT_EQ(r.parsed.exit_code, kExitUsage);
  EXPECT_EQ(r.err,
            "tickwired: key 'cpus': '0,2' lists 2 cpus for 4 threads (2 gateways + 2 access "
            "points)\n");
}

TEST(CommandLine, DelayFlagsSetTheirKeys) {
  Outcome r = run_tickwired({"--delay-max-bytes", "2097152", "--delay-bucket-ms", "500"});
  ASSERT_TRUE(r.parsed.invocation.has_value()) << r.err;
  EXPECT_EQ(r.parsed.invocation->config.delay_max_bytes, 2097152u);
  EXPECT_EQ(r.parsed.invocation->config.delay_bucket_ms, 500u);

  r = run_tickwired({"--delay-bucket-ms", "5"});
  EXPECT_EQ(r.err, "tickwired: --delay-bucket-ms: must be between 10 and 60000, got 5\n");
  r = run_tickwired({"--delay-max-bytes", "1024"});
  EXPECT_EQ(r.err,
            "tickwired: --delay-max-bytes: must be between 1048576 and 1099511627776, got 1024\n");
}

TEST(CommandLine, LoopSliceFlagSetsItsKey) {
  Outcome r = run_tickwired({"--loop-slice-us", "0"});
  ASSERT_TRUE(r.parsed.invocation.has_value()) << r.err;
  EXPECT_EQ(r.parsed.invocation->config.loop_slice_us, 0u);
  r = run_tickwired({"--loop-slice-us", "50"});
  EXPECT_EQ(r.err, "tickwired: --loop-slice-us: must be 0 (off) or between 100 and 100000, got 50\n");
}

TEST(CommandLine, HelpListsTheThreadAndDelayFlags) {
  Outcome help = run_tickwired({"--help"});
  for (const char* flag : {"--gateways", "--access-points", "--threads", "--cpus", "--loop-slice-us",
                           "--delay-max-bytes", "--delay-bucket-ms"}) {
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace tw::tickwired

namespace tw::tickwired {
namespace {

// --help answers "what if I leave it out": every setting flag shows its built-in default.
TEST(CommandLine, HelpShowsEachSettingsDefault) {
  Outcome help = run_tickwired({"--help"});
  // CLI11 wraps long lines; compare without the line breaks and indentation.
  std::string text;
  for (char c : help.out) {
    if (c == '\n') continue;
    if (c == ' ' && !text.empty() && text.back() == ' ') continue;
    text += c;
  }
  for (const char* shown : {"(default: 5000)", "(default: 127.0.0.1:9400)", "(default: least-loaded)",
                            "(default: conflate)", "(default: info)", "(default: 1048576)", "(default: 10000)",
                            "(default: tickwired)", "(default: none)", "(default: 127.0.0.1:1883)"}) {
    EXPECT_NE(text.find(shown), std::string::npos) << shown << "\n" << help.out;
  }
  // The listeners a broker opens when nothing is said: the help says so (it said "none" for HTTP).
  EXPECT_NE(text.find("\"\" = none (default: 127.0.0.1:9401)"), std::string::npos) << help.out;
  config::BrokerConfig defaults;
  EXPECT_EQ(config::value_text(defaults, "limits.max_channels"), "1000000");
  EXPECT_EQ(config::value_text(defaults, "not_found_ttl_ms"), "10000");
  EXPECT_EQ(config::value_text(defaults, "no_such_key"), "");
  EXPECT_EQ(config::value_text(defaults, "http_listen"), defaults.http_listen);
  EXPECT_EQ(config::value_text(defaults, "mqtt_listen"), defaults.mqtt_listen);
}

}  // namespace
}  // namespace tw::tickwired
