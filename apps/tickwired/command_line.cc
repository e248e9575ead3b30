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
  std::string threads;  // --threads G+A or single: sets gateways and access_points
  std::array<StringFlag, 8> strings{{
      {"--listen", "listen", "native protocol address, HOST:PORT or [IPV6]:PORT (port 0 = any)"},
      {"--mqtt-listen", "mqtt_listen", "default MQTT listener, HOST:PORT; skipped if taken; \"\" = none"},
      {"--http-listen", "http_listen", "default HTTP listener (admin, metrics, WebSocket), HOST:PORT; skipped if taken; \"\" = none"},
      {"--server-name", "server_name", "name sent to clients in WELCOME"},
      {"--log-level", "log_level", "debug, info, warn, error or off"},
      {"--provider-balance", "provider_balance", "least-loaded or round-robin"},
      {"--slow-consumer-policy", "slow_consumer_policy",
       "subscriber past --max-output-buffer: conflate, drop or disconnect"},
      {"--cpus", "cpus", "pin loop threads, gateways first, to this cpu list (2-7, 0,2,4-6)"},
  }};
  std::array<IntegerFlag, 27> integers{{
      {"--gateways", "gateways", "gateway loop threads (0 with --access-points 0: single-threaded)"},
      {"--access-points", "access_points", "access-point loop threads (0 with --gateways 0)"},
      {"--loop-slice-us", "loop_slice_us", "scheduler slice of each loop thread, µs (100-100000; 0: the kernel's)"},
      {"--delay-max-bytes", "delay_max_bytes", "memory bound of the delayed-subscription lines"},
      {"--delay-bucket-ms", "delay_bucket_ms", "delayed streams: one merged update per bucket"},
      {"--request-timeout-ms", "request_timeout_ms", "a provider must answer a request within this"},
      {"--release-linger-ms", "release_linger_ms", "keep an unwatched interactive channel this long"},
      {"--not-found-ttl-ms", "not_found_ttl_ms", "remember a provider's NOT_FOUND this long"},
      {"--sys-interval-ms", "sys_interval_ms", "publish the $SYS topics this often (0: never)"},
      {"--mqtt-max-keepalive-s", "mqtt_max_keepalive_s", "longest MQTT keep-alive; MQTT 5 clients asking more are told it (0: any)"},
      {"--channel-linger-ms", "channel_linger_ms", "free a channel with no publisher, provider or subscriber after this"},
      {"--heartbeat-ms", "heartbeat_ms", "heartbeat interval offered to clients"},
      {"--idle-timeout-ms", "idle_timeout_ms", "close a connection silent this long"},
      {"--hello-timeout-ms", "hello_timeout_ms", "close a connection that sends no HELLO"},
      {"--frame-deadline-ms", "frame_deadline_ms", "close a connection whose frame is not whole this long after it began"},
      {"--shutdown-grace-ms", "shutdown_grace_ms", "time to flush output on shutdown"},
      {"--max-frame", "limits.max_frame", "largest accepted frame, bytes"},
      {"--max-subscriptions", "limits.max_subscriptions", "subscriptions per connection"},
      {"--max-registrations", "limits.max_registrations", "publish registrations per connection"},
      {"--max-connections", "limits.max_connections", "open client connections"},
      {"--max-channels", "limits.max_channels", "channels (topics) held by the broker"},
      {"--max-channels-per-connection", "limits.max_channels_per_connection", "channels one connection may create"},
      {"--max-channels-per-user", "limits.max_channels_per_user", "channels one user's open connections may create (0: no bound)"},
      {"--max-output-buffer", "limits.max_output_buffer", "bytes queued to one connection"},
      {"--max-partial-input", "limits.max_partial_input", "bytes all connections hold in partial frames"},
      {"--max-topic-length", "limits.max_topic_length", "longest topic, bytes"},
      {"--max-topic-depth", "limits.max_topic_depth", "most levels in a topic"},
  }};
};

void declare_flags(CLI::App& app, Flags& flags) {
  app.set_version_flag("--version", "tickwired " TW_VERSION);
  app.add_option("--config", flags.config_file, "TOML configuration file");
  app.add_option("--print-port-file", flags.port_file,
                 "after listening, write the bound port number to FILE");
  // Each flag's help ends with the built-in default, so --help answers "what if I leave it out".
  const config::BrokerConfig defaults;
  auto with_default = [&](const char* help, const char* key) {
    const std::string value = config::value_text(defaults, key);
    return std::string(help) + " (default: " + (value.empty() ? "none" : value) + ")";
  };
  for (StringFlag& flag : flags.strings) app.add_option(flag.flag, flag.value, with_default(flag.help, flag.key));
  for (IntegerFlag& flag : flags.integers) app.add_option(flag.flag, flag.value, with_default(flag.help, flag.key));
  app.add_option("--threads", flags.threads,
                 "gateway and access-point threads (1+1, 2+2); 0+0 or single: one loop")
      ->type_name("G+A")
      ->excludes("--gateways")
      ->excludes("--access-points");
}

// One count of --threads G+A, digits only; -1 when not a number.
int64_t parse_count(std::string_view digits) {
  if (digits.empty() || digits.size() > 9) return -1;
  int64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

// "--threads 2+2" sets gateways and access_points together; "single" is 0+0.
// Both counts are checked against their keys' ranges and against each other.
Status apply_threads(std::string_view text, config::BrokerConfig& config) {
  std::string_view counts = text == "single" ? std::string_view("0+0") : text;
  size_t plus = counts.find('+');
  int64_t gateways = plus == std::string_view::npos ? -1 : parse_count(counts.substr(0, plus));
  int64_t access_points = plus == std::string_view::npos ? -1 : parse_count(counts.substr(plus + 1));
  if (gateways < 0 || access_points < 0) {
    return Error{"expected G+A (such as 1+1 or 2+2) or single, got '" + std::string(text) + "'"};
  }
  if ((gateways == 0) != (access_points == 0)) {
    return Error{"'" + std::string(text) + "': both counts 0 (single-threaded) or both at least 1"};
  }
  config::BrokerConfig patched = config;
  if (auto status = config::set_integer(patched, "gateways", gateways); !status) {
    return Error{"gateways " + status.error().message};
  }
  if (auto status = config::set_integer(patched, "access_points", access_points); !status) {
    return Error{"access points " + status.error().message};
  }
  config = patched;
  return Ok{};
}

// Applies the flags given on the command line over `config`; the error names the flag.
Status apply_overrides(const CLI::App& app, const Flags& flags, config::BrokerConfig& config) {
  auto named = [](const char* flag, const Error& error) {
    return Error{std::string(flag) + ": " + error.message};
  };
  if (app.count("--threads") != 0) {
    if (auto status = apply_threads(flags.threads, config); !status) {
      return named("--threads", status.error());
    }
  }
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
