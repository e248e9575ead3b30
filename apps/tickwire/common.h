// Shared pieces of the `tickwire` subcommands: global options, connecting,
// dictionary loading and Ctrl-C handling.
#pragma once
#include <csignal>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include <CLI/CLI.hpp>

#include "admin/http_client.h"
#include "tickwire/base/result.h"
#include "tickwire/client/client.h"
#include "tickwire/fields/dictionary.h"

namespace tw::cli {

// Exit codes: 0 success, 1 "not found"/nothing to show, 2 usage or runtime error.
inline constexpr int kExitOk = 0;
inline constexpr int kExitNotFound = 1;
inline constexpr int kExitError = 2;

struct CommonOptions {
  std::string server;           // --server HOST:PORT, else $TICKWIRE_SERVER, else 127.0.0.1:9400
  std::string dictionary_file;  // --dictionary FILE, else the built-in dictionary
  bool tls = false;             // --tls: connect with TLS (implied by --ca, --cert, --key)
  std::string ca;               // --ca FILE: CA bundle the broker's certificate must chain to
  std::string cert;             // --cert FILE, --key FILE: this client's certificate (mutual TLS)
  std::string key;
  std::string user;             // --user NAME: log in (docs/security.md)
  std::string password_file;    // --password-file FILE, else $TICKWIRE_PASSWORD
  std::string client_name;      // --name NAME: the client name in HELLO, else the subcommand's ("tickwire-sub")
};

// Each subcommand registers itself; its callback stores its exit code in `exit_code`.
void add_pub_command(CLI::App& app, const CommonOptions& common, int& exit_code);
void add_sub_command(CLI::App& app, const CommonOptions& common, int& exit_code);
void add_snapshot_command(CLI::App& app, const CommonOptions& common, int& exit_code);
void add_demo_feed_command(CLI::App& app, const CommonOptions& common, int& exit_code);
void add_provider_command(CLI::App& app, const CommonOptions& common, int& exit_code);   // provider.cc
void add_channels_command(CLI::App& app, const CommonOptions& common, int& exit_code);   // channels.cc
void add_passwd_command(CLI::App& app, int& exit_code);  // passwd.cc
void add_top_command(CLI::App& app, const CommonOptions& common, int& exit_code);  // top.cc
void add_fields_command(CLI::App& app, const CommonOptions& common, int& exit_code);  // fields.cc
void add_perf_command(CLI::App& app, const CommonOptions& common, int& exit_code);  // perf.cc
void add_consume_command(CLI::App& app, const CommonOptions& common, int& exit_code);  // consume.cc
void add_queue_command(CLI::App& app, const CommonOptions& common, int& exit_code);    // queue.cc
void add_links_command(CLI::App& app, const CommonOptions& common, int& exit_code);    // links.cc
void add_ha_command(CLI::App& app, const CommonOptions& common, int& exit_code);       // ha.cc

// --tls, or any of the TLS file flags that imply it.
inline bool wants_tls(const CommonOptions& common) {
  return common.tls || !common.ca.empty() || !common.cert.empty() || !common.key.empty();
}
// Builds client Options from --server / $TICKWIRE_SERVER, --name (else
// `client_name`, the subcommand's default) and the TLS flags.
Result<client::Options> client_options(const CommonOptions& common, const std::string& client_name);
// Connects, printing the failure to stderr; false on failure.
bool connect_or_report(client::Client& client, const client::Options& options);
// The broker's admin API (HTTP): `http` (HOST:PORT) when given, else
// $TICKWIRE_HTTP, else the host of --server / $TICKWIRE_SERVER on port 9401;
// --user and --password-file as HTTP Basic credentials.
Result<admin::HttpTarget> admin_target(const CommonOptions& common, const std::string& http = {});
// GET `path` on the admin API (admin_target(common, http)): the body of a 200
// answer, or why not ("GET /api/v1/links: HTTP 403 ...", or the transport's error).
Result<std::string> admin_get(const CommonOptions& common, const std::string& http, const std::string& path);
// What `tickwire links`, `queue list` and `ha status` share: GET `path`;
// with `raw`, the JSON as it came; else the answer (which must hold `key`)
// goes to `print`. Errors are printed as "COMMAND: ..."; the exit code.
int show_admin_json(const CommonOptions& common, const std::string& http, const std::string& path, const char* key,
                    const char* command, bool raw, const std::function<int(const nlohmann::json&)>& print);
// The broker's field dictionary (GET /api/v1/fields on admin_target), or why not.
Result<fields::Dictionary> broker_dictionary(const CommonOptions& common, const std::string& http = {});
// The dictionary to name fields with: --dictionary FILE (errors name the file
// and line), else the broker's when its admin API answers, else the built-in one.
Result<const fields::Dictionary*> dictionary(const CommonOptions& common);

// The usage error for a command line whose subcommand does not exist
// ("tickwire: unknown subcommand 'chanels' (did you mean 'channels'?) ..."),
// or "" when the failed parse had another cause. Call after app.parse threw.
std::string unknown_subcommand_message(CLI::App& app);
// Topics and patterns as people coming from MQTT and NATS write them: the
// hint for a level that is MQTT's '#' or '+' ("" when none), which the
// validator native_path() turns into a usage error; and the note for a NATS
// style "A.B.C" (one level here), which commands print and go on.
std::string foreign_wildcard(std::string_view path);
std::string dotted_levels_note(std::string_view path);
CLI::Validator native_path();
// Option checks whose error says the rule ("--count: must be more than 0, got '0'").
CLI::Validator positive_number();
CLI::Validator non_negative_number();
// Connects like connect_or_report, but keeps trying while the broker cannot be
// reached (the client's reconnect backoff, one stderr line per failed
// attempt) until it answers or Ctrl-C; a setup error (bad TLS file) fails at once.
bool connect_retrying(client::Client& client, const client::Options& options, const char* who);

// Ctrl-C / SIGTERM set this; loops check it between polls.
extern volatile std::sig_atomic_t g_stop_requested;
void install_stop_signals();

}  // namespace tw::cli
