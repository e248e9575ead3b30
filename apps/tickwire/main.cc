// tickwire: the Tickwire command-line client. One file per subcommand.
#include <cstdio>
#include <string>

#include "common.h"

int main(int argc, char** argv) {
  CLI::App app{"tickwire: publish, subscribe and inspect a Tickwire broker"};
  app.set_version_flag("--version", TW_VERSION);
  app.require_subcommand(1, 1);
  app.fallthrough();  // global options may also follow the subcommand
  app.failure_message(CLI::FailureMessage::help);

  tw::cli::CommonOptions common;
  app.add_option("-s,--server", common.server,
                 "broker HOST:PORT (default: $TICKWIRE_SERVER, else 127.0.0.1:9400)");
  app.add_option("--name", common.client_name,
                 "client name sent to the broker, as its connection listings and logs show it "
                 "(default: tickwire-SUBCOMMAND, e.g. tickwire-sub)")
      ->check(CLI::Validator(
          [](std::string& name) -> std::string {
            if (name.empty() || name.size() > 255) return "must be 1..255 bytes long";
            return {};
          },
          "NAME"));
  app.add_option("--dictionary", common.dictionary_file, "field dictionary file (default: built-in)");
  app.add_flag("--tls", common.tls, "connect with TLS (docs/security.md)");
  app.add_option("--ca", common.ca, "CA file the broker's certificate must chain to (default: system CAs); implies --tls");
  app.add_option("--cert", common.cert, "client certificate file for mutual TLS (with --key); implies --tls");
  app.add_option("--key", common.key, "client private key file (with --cert); implies --tls");

  app.add_option("--user", common.user, "log in as this user (docs/security.md)");
  app.add_option("--password-file", common.password_file,
                 "file whose first line is the password (default: $TICKWIRE_PASSWORD)");

  int exit_code = tw::cli::kExitOk;
  tw::cli::add_pub_command(app, common, exit_code);
  tw::cli::add_sub_command(app, common, exit_code);
  tw::cli::add_snapshot_command(app, common, exit_code);
  tw::cli::add_demo_feed_command(app, common, exit_code);
  tw::cli::add_provider_command(app, common, exit_code);
  tw::cli::add_channels_command(app, common, exit_code);
  tw::cli::add_perf_command(app, common, exit_code);
  tw::cli::add_passwd_command(app, exit_code);
  tw::cli::add_top_command(app, common, exit_code);
  tw::cli::add_fields_command(app, common, exit_code);
  tw::cli::add_consume_command(app, common, exit_code);
  tw::cli::add_queue_command(app, common, exit_code);
  tw::cli::add_links_command(app, common, exit_code);
  tw::cli::add_ha_command(app, common, exit_code);

  tw::cli::install_stop_signals();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 would say "A subcommand is required" of a misspelt one.
    if (std::string unknown = tw::cli::unknown_subcommand_message(app); !unknown.empty()) {
      std::fputs(unknown.c_str(), stderr);
      return tw::cli::kExitError;
    }
    int rc = app.exit(e);
    return rc == 0 ? 0 : tw::cli::kExitError;
  }
  return exit_code;
}
