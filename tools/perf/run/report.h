// What `tickwire perf run` writes: result.json, table.txt and latency.svg.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "tickwire/base/result.h"
#include "perf/run/orchestrator.h"
#include "perf/run/proc_stats.h"

namespace tw::perf::run {

struct RunContext {
  std::string command;  // the exact command line
  std::string date;     // UTC, ISO 8601
  MachineInfo machine;
};
RunContext current_context(int argc, const char* const* argv);

// result.json: context, options, every trial, and the summary of the mode.
nlohmann::json report_json(const RunReport& report, const RunContext& context);
// The human table (also printed).
std::string report_table(const RunReport& report);
// latency.svg: percentiles against rate; for throughput, a bar per confirmation run.
std::string report_svg(const RunReport& report);

// Writes the three files into dir (created if needed).
Status write_report_files(const std::string& dir, const RunReport& report, const RunContext& context);

}  // namespace tw::perf::run
