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
