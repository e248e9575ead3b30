#include "common.h"

#include <cstdio>
#include <memory>

namespace tw::cli {

volatile std::sig_atomic_t g_stop_requested = 0;

namespace {
void request_stop(int) { g_stop_requested = 1; }
}  // namespace

void install_stop_signals() {
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
}

Result<client::Options> client_options(const CommonOptions& common, const std::string& client_name) {
  client::Options options;
  std::string server = client::resolve_server(common.server);
  if (!client::parse_server_address(server, options.host, options.port))
    return Error{"invalid server address '" + server + "' (expected HOST:PORT)"};
  options.client_name = client_name;
  options.tls = wants_tls(common);
  options.ca = common.ca;
  options.cert = common.cert;
  options.key = common.key;
  if (!common.user.empty()) {
    auto password = client::resolve_password(common.password_file);
    if (!password) return password.error();
    options.user = common.user;
    options.password = std::move(*password);
  }
  return options;
}

bool connect_or_report(client::Client& client, const client::Options& options) {
  Status connected = client.connect(options);
  if (!connected) std::fprintf(stderr, "tickwire: %s\n", connected.error().message.c_str());
  return connected.ok();
}

Result<const fields::Dictionary*> dictionary(const CommonOptions& common) {
  if (common.dictionary_file.empty()) return &fields::Dictionary::builtin();
  // Loaded once per process and kept for its lifetime: handlers hold pointers into it.
  static std::unique_ptr<fields::Dictionary> loaded;
  auto result = fields::Dictionary::load(common.dictionary_file);
  if (!result) return result.error();
  loaded = std::make_unique<fields::Dictionary>(std::move(*result));
  return loaded.get();
}

}  // namespace tw::cli
