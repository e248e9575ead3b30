#include "command_line.h"

#include <CLI/CLI.hpp>
#include <array>
#include <cstdint>

namespace tw::tickwired {
namespace {

// Every override flag names the config key it sets, so range checks and
// error text are shared with the TOML file.
struct IntegerFlag {
  const char* flag;
  const char* key;
  const char* help;
  int64_t value = 0;
};

struct StringFlag {
  const char* flag;
  const char* key;
  const char* help;
  std::string value;
};

struct Flags {
  std::string config_file;
  std::string port_file;
  std::array<StringFlag, 5> strings{{
      {"--listen", "listen", "native protocol address, HOST:PORT or [IPV6]:PORT (port 0 = any)"},
      {"--server-name", "server_name", "name sent to clients in WELCOME"},
      {"--log-level", "log_level", "debug, info, warn, error or off"},
      {"--provider-balance", "provider_balance", "least-loaded or round-robin"},
      {"--slow-consumer-policy", "slow_consumer_policy",
       "subscriber past --max-output-buffer: conflate (default), drop or disconnect"},
  }};
  std::array<IntegerFlag, 15> integers{{
      {"--request-timeout-ms", "request_timeout_ms", "a provider must answer a request within this"},
      {"--release-linger-ms", "release_linger_ms", "keep an unwatched interactive channel this long"},
      {"--not-found-ttl-ms", "not_found_ttl_ms", "remember a provider's NOT_FOUND this long"},
      {"--heartbeat-ms", "heartbeat_ms", "heartbeat interval offered to clients"},
      {"--idle-timeout-ms", "idle_timeout_ms", "close a connection silent this long"},
      {"--hello-timeout-ms", "hello_timeout_ms", "close a connection that sends no HELLO"},
      {"--shutdown-grace-ms", "shutdown_grace_ms", "time to flush output on shutdown"},
      {"--max-frame", "limits.max_frame", "largest accepted frame, bytes"},
      {"--max-subscriptions", "limits.max_subscriptions", "subscriptions per connection"},
      {"--max-registrations", "limits.max_registrations", "publish registrations per connection"},
      {"--max-connections", "limits.max_connections", "open client connections"},
      {"--max-channels", "limits.max_channels", "channels (topics) held by the broker"},
      {"--max-output-buffer", "limits.max_output_buffer", "bytes queued to one connection"},
      {"--max-topic-length", "limits.max_topic_length", "longest topic, bytes"},
      {"--max-topic-depth", "limits.max_topic_depth", "most levels in a topic"},
  }};
};

void declare_flags(CLI::App& app, Flags& flags) {
  app.set_version_flag("--version", "tickwired " TW_VERSION);
  app.add_option("--config", flags.config_file, "TOML configuration file");
  app.add_option("--print-port-file", flags.port_file,
                 "after listening, write the bound port number to FILE");
  for (StringFlag& flag : flags.strings) app.add_option(flag.flag, flag.value, flag.help);
  for (IntegerFlag& flag : flags.integers) app.add_option(flag.flag, flag.value, flag.help);
}

// Applies the flags given on the command line over `config`; the error names the flag.
Status apply_overrides(const CLI::App& app, const Flags& flags, config::BrokerConfig& config) {
  auto named = [](const char* flag, const Error& error) {
    return Error{std::string(flag) + ": " + error.message};
  };
  for (const StringFlag& flag : flags.strings) {
    if (app.count(flag.flag) == 0) continue;
    if (auto status = config::set_string(config, flag.key, flag.value); !status) {
      return named(flag.flag, status.error());
    }
  }
  for (const IntegerFlag& flag : flags.integers) {
    if (app.count(flag.flag) == 0) continue;
    if (auto status = config::set_integer(config, flag.key, flag.value); !status) {
      return named(flag.flag, status.error());
    }
  }
  return Ok{};
}

Result<config::BrokerConfig> build_config(const CLI::App& app, const Flags& flags) {
  config::BrokerConfig config;
  if (!flags.config_file.empty()) {
    auto loaded = config::load_file(flags.config_file);
    if (!loaded) return loaded.error();
    config = std::move(loaded.value());
  }
  if (auto status = apply_overrides(app, flags, config); !status) return status.error();
  if (auto status = config::validate(config); !status) return status.error();
  return config;
}

}  // namespace

ParsedCommandLine parse_command_line(int argc, const char* const* argv, std::ostream& out,
                                     std::ostream& err) {
  CLI::App app{"Tickwire market-data broker.\nSettings apply in order: built-in defaults, "
               "then --config FILE, then the flags below.",
               "tickwired"};
  Flags flags;
  declare_flags(app, flags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& done) {  // --help, --version
    return {std::nullopt, app.exit(done, out, err)};
  } catch (const CLI::ParseError& misuse) {
    err << "tickwired: " << misuse.what() << "\n\n" << app.help();
    return {std::nullopt, kExitUsage};
  }
  auto config = build_config(app, flags);
  if (!config) {
    err << "tickwired: " << config.error().message << "\n";
    return {std::nullopt, kExitUsage};
  }
  return {Invocation{std::move(config.value()), flags.port_file}, kExitOk};
}

}  // namespace tw::tickwired
