// `tickwire perf`: the measurement tool (docs/perf.md). One file per subcommand.
#pragma once
#include <string>
#include <vector>

#include "common.h"
#include "perf/transport.h"

namespace tw::cli {

// With --user, the password comes from --password-file or $TICKWIRE_PASSWORD ("" when neither
// is readable: the broker then refuses the login, which the run reports).
inline perf::TlsOptions perf_tls(const CommonOptions& common) {
  std::string password;
  if (auto read = client::resolve_password(common.password_file); read && !common.user.empty()) password = *read;
  return {wants_tls(common), common.ca, common.cert, common.key, common.user, password};
}
// --fields N: field lists when N > 0.
inline perf::PayloadFormat payload_format(uint32_t fields) {
  return fields > 0 ? perf::PayloadFormat::FieldList : perf::PayloadFormat::Opaque;
}
// The global TLS and login flags as arguments, for the perf pub and perf sub processes perf run starts.
inline std::vector<std::string> tls_args(const CommonOptions& common) {
  std::vector<std::string> args;
  if (wants_tls(common)) args.push_back("--tls");
  for (auto [flag, value] : {std::pair{"--ca", &common.ca}, {"--cert", &common.cert}, {"--key", &common.key},
                             {"--user", &common.user}, {"--password-file", &common.password_file}}) {
    if (!value->empty()) args.insert(args.end(), {flag, *value});
  }
  return args;
}

void add_perf_pub_command(CLI::App& perf, const CommonOptions& common, int& exit_code);  // perf_pub.cc
void add_perf_sub_command(CLI::App& perf, const CommonOptions& common, int& exit_code);  // perf_sub.cc
void add_perf_run_command(CLI::App& perf, const CommonOptions& common, int& exit_code);  // perf_run.cc

}  // namespace tw::cli
