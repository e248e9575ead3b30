#include "perf/consumer.h"

#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "perf/field_payload.h"
#include "perf/probe.h"

namespace tw::perf {

namespace {

double us(uint64_t ns) { return static_cast<double>(ns) / 1000.0; }
// JSON carries nanosecond resolution, not binary noise.
double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

nlohmann::ordered_json latency_json(const LatencySummary& l) {
  return {{"min", round3(l.min_us)}, {"mean", round3(l.mean_us)}, {"p50", round3(l.p50_us)},
          {"p90", round3(l.p90_us)}, {"p99", round3(l.p99_us)},   {"p999", round3(l.p999_us)},
          {"max", round3(l.max_us)},   {"stddev", round3(l.stddev_us)}, {"under_50us", round3(l.under_50us)},
          {"over_1ms", l.over_1ms}};
}

std::string latency_row(const char* label, const LatencySummary& l) {
  char line[256];
  std::snprintf(line, sizeof line, "  %-8s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f  (%llu)\n", label,
                l.min_us, l.mean_us, l.p50_us, l.p90_us, l.p99_us, l.p999_us, l.max_us,
                static_cast<unsigned long long>(l.count));
  return line;
}

}  // namespace

LatencySummary summarize(const Histogram& h) {
  LatencySummary l;
  l.count = h.count();
  if (l.count == 0) return l;
  l.min_us = us(h.min());
  l.mean_us = h.mean() / 1000.0;
  l.p50_us = us(h.value_at_percentile(50));
  l.p90_us = us(h.value_at_percentile(90));
  l.p99_us = us(h.value_at_percentile(99));
  l.p999_us = us(h.value_at_percentile(99.9));
  l.max_us = us(h.max());
  l.stddev_us = h.stddev() / 1000.0;
  l.under_50us = static_cast<double>(h.count_at_or_below(kFastNs - 1)) / static_cast<double>(l.count);
  l.over_1ms = l.count - h.count_at_or_below(kSlowNs);
  return l;
}

Consumer::Stream* Consumer::stream(uint32_t publisher_id, uint32_t topic_index) {
  if (publisher_id >= kMaxPublisherId || topic_index >= kMaxTopicIndex) return nullptr;
  if (streams_.size() <= publisher_id) streams_.resize(publisher_id + 1);
  auto& topics = streams_[publisher_id];
  if (topics.size() <= topic_index) {
    // Grow geometrically so a publisher's topics cost few reallocations.
    size_t grown = std::max<size_t>(topic_index + 1, topics.size() * 2);
    if (tracked_streams_ + grown - topics.size() > kMaxTrackedStreams) grown = topic_index + 1;
    if (tracked_streams_ + grown - topics.size() > kMaxTrackedStreams) return nullptr;
    if (topics.empty()) ++totals_.publishers;
    tracked_streams_ += grown - topics.size();
    topics.resize(grown);
  }
  return &topics[topic_index];
}

void Consumer::check_sequence(Stream& s, uint64_t seq) {
  if (!s.seen) {
    s.seen = true;
    if (seq > 1) {
      ++totals_.late_joins;
      totals_.before_join += seq - 1;
    }
    s.last_seq = seq;
    return;
  }
  if (seq == s.last_seq + 1) {
    s.last_seq = seq;
  } else if (seq > s.last_seq + 1) {
    ++totals_.gaps;
    ++interval_gaps_;
    totals_.missing += seq - s.last_seq - 1;
    interval_missing_ += seq - s.last_seq - 1;
    s.last_seq = seq;
  } else {
    ++totals_.dups;
  }
}

void Consumer::on_message(std::span<const uint8_t> payload, bool is_initial_image, uint64_t now_ns, bool is_image) {
  std::optional<ProbeHeader> header;
  if (fields_ > 0) {
    FieldCheck check = check_fields(payload, fields_);
    header = check.header;
    totals_.missing_fids += check.missing;
    totals_.wrong_values += check.wrong;
  } else {
    header = decode_probe(payload);
  }
  Stream* s = header ? stream(header->publisher_id, header->topic_index) : nullptr;
  if (s == nullptr) {
    ++totals_.malformed;
    return;
  }
  if (is_image && joined_ns_ != 0 && header->send_ns < joined_ns_) is_initial_image = true;
  if (is_initial_image) {
    ++totals_.images;
    if (!s->seen) totals_.before_join += header->seq;
    if (!s->seen || header->seq > s->last_seq) s->last_seq = header->seq;
    s->seen = true;
    return;
  }
  if (totals_.received == 0) {
    first_ns_ = now_ns;
    interval_start_ns_ = now_ns;
  }
  last_ns_ = now_ns;
  ++totals_.received;
  check_sequence(*s, header->seq);

  uint64_t latency = now_ns > header->send_ns ? now_ns - header->send_ns : 0;
  interval_latency_.record(latency);  // folded into latency_ per interval: one record per message
  if (header->is_probe()) {
    ++totals_.probes;
    probe_latency_.record(latency);
    if (probe_arrivals_.size() < probe_arrival_capacity_) probe_arrivals_.push_back({header->send_ns, now_ns});
    else if (probe_arrival_capacity_ != 0) ++probes_not_logged_;
  }
}

void Consumer::keep_probe_arrivals(size_t capacity) {
  probe_arrival_capacity_ = capacity;
  probe_arrivals_.reserve(capacity);
}

Histogram Consumer::latency() const {
  Histogram all = latency_;
  all.merge(interval_latency_);
  return all;
}

IntervalStats Consumer::take_interval(uint64_t now_ns) {
  IntervalStats s;
  s.t = ++intervals_;
  s.messages = interval_latency_.count();
  double seconds = now_ns > interval_start_ns_ ? static_cast<double>(now_ns - interval_start_ns_) / 1e9 : 0;
  s.rate = seconds > 0 ? static_cast<double>(s.messages) / seconds : 0;
  LatencySummary l = summarize(interval_latency_);
  s.low_us = l.min_us;
  s.avg_us = l.mean_us;
  s.high_us = l.max_us;
  s.p50_us = l.p50_us;
  s.p99_us = l.p99_us;
  s.p999_us = l.p999_us;
  s.gaps = interval_gaps_;
  s.missing = interval_missing_;
  latency_.merge(interval_latency_);
  interval_latency_.reset();
  interval_gaps_ = 0;
  interval_missing_ = 0;
  interval_start_ns_ = now_ns;
  return s;
}

std::string interval_header_text() {
  char line[256];
  std::snprintf(line, sizeof line, "%6s %10s %10s %10s %10s %10s %10s %10s %8s %8s", "TIME", "RATE", "TRANS LOW",
                "TRANS AVG", "TRANS HIGH", "P50", "P99", "P99.9", "GAPS", "MISSING");
  return line;
}

std::string interval_text(const IntervalStats& s) {
  char line[256];
  std::snprintf(line, sizeof line, "%6llu %10.0f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %8llu %8llu",
                static_cast<unsigned long long>(s.t), s.rate, s.low_us, s.avg_us, s.high_us, s.p50_us, s.p99_us,
                s.p999_us, static_cast<unsigned long long>(s.gaps), static_cast<unsigned long long>(s.missing));
  return line;
}

std::string interval_json(const IntervalStats& s) {
  nlohmann::ordered_json j = {{"role", "sub"},
                              {"type", "second"},
                              {"t", s.t},
                              {"rate", std::llround(s.rate)},
                              {"low_us", round3(s.low_us)},
                              {"avg_us", round3(s.avg_us)},
                              {"high_us", round3(s.high_us)},
                              {"p50_us", round3(s.p50_us)},
                              {"p99_us", round3(s.p99_us)},
                              {"p999_us", round3(s.p999_us)},
                              {"gaps", s.gaps},
                              {"missing", s.missing}};
  return j.dump();
}

SubSummary make_summary(const Consumer& consumer, double cpu_s) {
  SubSummary s;
  s.totals = consumer.totals();
  s.latency = summarize(consumer.latency());
  s.probe_latency = summarize(consumer.probe_latency());
  if (consumer.started()) {
    s.seconds = static_cast<double>(consumer.last_ns() - consumer.first_ns()) / 1e9;
    s.last_ns = consumer.last_ns();
  }
  s.cpu_s = cpu_s;
  return s;
}

std::string summary_json(const SubSummary& s) {
  const ConsumerTotals& t = s.totals;
  double rate = s.seconds > 0 ? static_cast<double>(t.received) / s.seconds : 0;
  nlohmann::ordered_json j = {{"role", "sub"},
                              {"type", "summary"},
                              {"received", t.received},
                              {"probes", t.probes},
                              {"gaps", t.gaps},
                              {"missing", t.missing},
                              {"dups", t.dups},
                              {"cpu_s", round3(s.cpu_s)},
                              {"latency_us", latency_json(s.latency)},
                              {"probe_latency_us", latency_json(s.probe_latency)},
                              {"images", t.images},
                              {"late_joins", t.late_joins},
                              {"before_join", t.before_join},
                              {"malformed", t.malformed},
                              {"missing_fids", t.missing_fids},
                              {"wrong_values", t.wrong_values},
                              {"publishers", t.publishers},
                              {"seconds", round3(s.seconds)},
                              {"last_ns", s.last_ns},
                              {"rate", std::llround(rate)}};
  return j.dump();
}

std::string summary_text(const SubSummary& s) {
  const ConsumerTotals& t = s.totals;
  double rate = s.seconds > 0 ? static_cast<double>(t.received) / s.seconds : 0;
  char head[512];
  std::snprintf(head, sizeof head,
                "summary: received %llu (probes %llu, images %llu) from %llu publisher(s) in %.3f s, %.0f msg/s\n"
                "         gaps %llu  missing %llu  dups %llu  late joins %llu  before join %llu  malformed %llu  cpu %.3f s\n"
                "latency us %10s %10s %10s %10s %10s %10s %10s\n",
                static_cast<unsigned long long>(t.received), static_cast<unsigned long long>(t.probes),
                static_cast<unsigned long long>(t.images), static_cast<unsigned long long>(t.publishers), s.seconds,
                rate, static_cast<unsigned long long>(t.gaps), static_cast<unsigned long long>(t.missing),
                static_cast<unsigned long long>(t.dups), static_cast<unsigned long long>(t.late_joins),
                static_cast<unsigned long long>(t.before_join), static_cast<unsigned long long>(t.malformed), s.cpu_s, "min", "mean", "p50", "p90", "p99", "p99.9",
                "max");
  std::string fids;
  if (t.missing_fids + t.wrong_values > 0)
    fids = "         missing fids " + std::to_string(t.missing_fids) + "  wrong values " + std::to_string(t.wrong_values) + "\n";
  return head + fids + latency_row("all", s.latency) + latency_row("probes", s.probe_latency);
}

}  // namespace tw::perf
