// `tickwire perf`: the measurement tool (docs/perf.md). One file per subcommand.
#pragma once
#include "common.h"

namespace tw::cli {

void add_perf_pub_command(CLI::App& perf, const CommonOptions& common, int& exit_code);  // perf_pub.cc
void add_perf_sub_command(CLI::App& perf, const CommonOptions& common, int& exit_code);  // perf_sub.cc
void add_perf_run_command(CLI::App& perf, const CommonOptions& common, int& exit_code);  // perf_run.cc

}  // namespace tw::cli
