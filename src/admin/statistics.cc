#include "admin/statistics.h"

#include <algorithm>
#include <map>
#include <set>

#include "admin/ask.h"
#include "admin/collector.h"
#include "auth/authority.h"
#include "base/clock.h"
#include "tier/access_point.h"
#include "tier/gateway.h"
#include "topic/topic.h"

namespace tw::admin {

namespace {

uint64_t wall_ms_now() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

double per_second(uint64_t before, uint64_t after, double seconds) {
  return after >= before ? static_cast<double>(after - before) / seconds : 0.0;
}

}  // namespace

tier::LoopInbox& inbox_of(const tier::Broker::Loop& loop) {
  return loop.gateway ? loop.gateway->inbox() : loop.access_point->inbox();
}

broker::Router& router_of(const tier::Broker::Loop& loop) {
  return loop.gateway ? loop.gateway->router() : loop.access_point->router();
}

std::vector<tier::LoopInbox*> access_point_inboxes(const tier::Broker& broker) {
  std::vector<tier::LoopInbox*> out;
  for (const auto& loop : broker.loops())
    if (loop.access_point) out.push_back(&loop.access_point->inbox());
  return out;
}

std::vector<tier::LoopInbox*> owner_inboxes(const tier::Broker& broker) {
  std::vector<tier::LoopInbox*> out;
  for (const auto& loop : broker.loops())
    if (loop.gateway || loop.role == "single") out.push_back(&inbox_of(loop));
  return out;
}

Statistics::Statistics(tier::Broker& broker)
    : broker_(broker), start_mono_ns_(monotonic_ns()), start_wall_ms_(wall_ms_now()) {}

Sample Statistics::sample() const {
  Sample s;
  s.mono_ns = monotonic_ns();
  s.wall_ms = wall_ms_now();
  s.totals = broker_.totals();
  for (const auto& loop : broker_.loops()) {
    const tier::LoopSnapshot snap = loop.gateway ? loop.gateway->snapshot() : loop.access_point->snapshot();
    s.loops.push_back({loop.name, loop.role, snap});
  }
  if (const auth::Authority* authority = broker_.authority(); authority && authority->accounts_usage()) {
    s.users = authority->usage_totals();
  }
  if (const auth::Authority* authority = broker_.authority()) s.auth_source_refusals = authority->source_refusals();
  if (auto all = connections()) {
    ConnectionSummary summary;
    summary.open = all->size();
    for (std::string_view name : broker_.protocols().names()) summary.by_protocol[std::string(name)] = 0;
    for (const tier::ConnectionInfo& c : *all) {
      ++summary.by_protocol[c.protocol];
      summary.subscriptions += c.subscriptions;
      summary.slow += c.slow ? 1 : 0;
    }
    s.connections = summary;
  }
  return s;
}

Rates Statistics::rates_between(const Sample& before, const Sample& after) {
  Rates r;
  const double seconds = static_cast<double>(after.mono_ns - before.mono_ns) / 1e9;
  if (seconds <= 0) return r;
  r.msgs_in = per_second(before.totals.router.publishes, after.totals.router.publishes, seconds);
  r.msgs_out = per_second(before.totals.router.deliveries, after.totals.router.deliveries, seconds);
  r.bytes_in = per_second(before.totals.counters.bytes_in, after.totals.counters.bytes_in, seconds);
  r.bytes_out = per_second(before.totals.counters.bytes_out, after.totals.counters.bytes_out, seconds);
  for (size_t i = 0; i < after.loops.size() && i < before.loops.size(); ++i) {
    const reactor::LoopStats& a = after.loops[i].snapshot.loop;
    const reactor::LoopStats& b = before.loops[i].snapshot.loop;
    LoopRates lr;
    lr.busy = std::min(1.0, per_second(b.busy_ns, a.busy_ns, seconds) / 1e9);
    lr.turns_per_s = per_second(b.turns, a.turns, seconds);
    r.loops.push_back(lr);
  }
  return r;
}

Statistics::View Statistics::current(uint64_t max_age_ms) {
  std::lock_guard lock(mutex_);
  const uint64_t now = monotonic_ns();
  if (!latest_ || now - latest_->mono_ns > max_age_ms * 1'000'000ull) {
    previous_ = std::move(latest_);
    latest_ = sample();
  }
  View view;
  view.now = *latest_;
  view.uptime_ms = (latest_->mono_ns - start_mono_ns_) / 1'000'000;
  if (previous_) {
    view.rates = rates_between(*previous_, *latest_);
  } else {
    view.rates.loops.resize(latest_->loops.size());
  }
  return view;
}

std::optional<std::vector<tier::ConnectionInfo>> Statistics::connections() const {
  std::vector<tier::AccessPoint*> access_points;
  for (const auto& loop : broker_.loops())
    if (loop.access_point) access_points.push_back(loop.access_point);
  auto answers = ask_all<std::vector<tier::ConnectionInfo>>(
      access_point_inboxes(broker_), [access_points](size_t i) {
        std::vector<tier::ConnectionInfo> rows;
        access_points[i]->describe_connections(static_cast<uint32_t>(i), rows);
        return rows;
      });
  if (!answers) return std::nullopt;
  std::vector<tier::ConnectionInfo> all;
  for (auto& rows : *answers) all.insert(all.end(), rows.begin(), rows.end());
  return all;
}

std::optional<std::vector<ChannelRow>> Statistics::channels(const std::string& prefix) const {
  std::vector<broker::Router*> routers;
  for (const auto& loop : broker_.loops())
    if (loop.gateway || loop.role == "single") routers.push_back(&router_of(loop));
  auto answers = ask_all<std::vector<ChannelRow>>(owner_inboxes(broker_), [routers, prefix](size_t i) {
    Collector collector;
    collector.prefix = prefix;
    routers[i]->list_channels(&collector, "", 0);
    return std::move(collector.rows);
  });
  if (!answers) return std::nullopt;
  std::vector<ChannelRow> all;
  for (auto& rows : *answers) all.insert(all.end(), rows.begin(), rows.end());
  std::sort(all.begin(), all.end(), [](const ChannelRow& a, const ChannelRow& b) { return a.topic < b.topic; });
  return all;
}

std::vector<ServiceRow> Statistics::services(const std::vector<ChannelRow>& channels) {
  std::map<std::string, ServiceRow> by_name;
  std::map<std::string, std::set<std::string>> providers;
  for (const ChannelRow& c : channels) {
    const std::string name(topic::service_of(c.topic));
    ServiceRow& row = by_name[name];
    row.name = name;
    ++row.channels;
    row.subscribers += c.subscribers;
    row.rate += c.rate;
    if (!c.provider.empty()) providers[name].insert(c.provider);
  }
  std::vector<ServiceRow> out;
  for (auto& [name, row] : by_name) {
    row.providers.assign(providers[name].begin(), providers[name].end());
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace tw::admin
