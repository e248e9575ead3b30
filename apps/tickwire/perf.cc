#include "perf_commands.h"

namespace tw::cli {

void add_perf_command(CLI::App& app, const CommonOptions& common, int& exit_code) {
  CLI::App* perf = app.add_subcommand("perf", "measure a broker: producer, consumer and orchestrator");
  perf->require_subcommand(1, 1);
  add_perf_pub_command(*perf, common, exit_code);
  add_perf_sub_command(*perf, common, exit_code);
  add_perf_run_command(*perf, common, exit_code);
}

}  // namespace tw::cli
