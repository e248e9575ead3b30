// /metrics: the Prometheus text exposition format (version 0.0.4), written
// by hand and checked by `promtool check metrics` in the tests
// (docs/ARCHITECTURE.md, "Dependencies": why not prometheus-cpp).
// Every metric is named tickwire_* (but the client libraries' process_*
// families, admin/process_metrics.h), counters end in _total, each family has
// HELP and TYPE lines; docs/operations.md lists them all.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "admin/statistics.h"
#include "http/server.h"
#include "tier/broker_link.h"
#include "tier/ha_role.h"

namespace tw::queue {
class Spool;
}

namespace tw::admin {

inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

// A writer of the format's families and samples.
class PromText {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;
  // Starts a family: `type` is "counter" or "gauge".
  void family(std::string_view name, std::string_view type, std::string_view help);
  void sample(std::string_view name, double value, const Labels& labels = {});
  void sample(std::string_view name, uint64_t value, const Labels& labels = {});
  const std::string& text() const { return text_; }

 private:
  void labels(const Labels& labels);
  std::string text_;
};

// Label values and HELP text escaped as the format requires (\\, \", \n).
std::string escape_label_value(std::string_view value);
std::string escape_help(std::string_view help);

// `http`: the HTTP listener's counts (null: no HTTP listener); `spool`: the
// queues of guaranteed messaging (null: no store).
// `links`: the broker's [[link]]s (none: no families). `ha`: an HA pair's member (null: no families).
std::string render_metrics(const Statistics::View& view, const http::ServerStats* http = nullptr,
                           const queue::Spool* spool = nullptr, const std::vector<tier::LinkState>& links = {},
                           const tier::HaStatus* ha = nullptr);

}  // namespace tw::admin
