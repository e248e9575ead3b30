#include "perf/producer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "perf/cpu_time.h"
#include "perf/pacer.h"

namespace tw::perf {

namespace {
constexpr uint64_t kPollEveryNs = 1'000'000;  // read input (heartbeats, pings) at least this often
constexpr int kSyncTimeoutMs = 10'000;
}  // namespace

MessageStream::MessageStream(const ProducerOptions& options)
    : options_(options),
      next_seq_(std::max<uint32_t>(options.topics, 1), 1),
      payload_(std::max(options.payload_size, kProbeHeaderSize), 0),
      field_payload_(options.fields),
      payload_view_(payload_) {}

uint64_t MessageStream::take_seq(uint32_t local_index) {
  uint64_t seq = next_seq_[local_index]++;
  if (local_index == 0 && options_.skip_seq != 0 && seq == options_.skip_seq) seq = next_seq_[0]++;
  return seq;
}

uint32_t MessageStream::next(bool probe, uint64_t send_ns) {
  uint32_t& round_robin = probe ? next_probe_topic_ : next_load_topic_;
  uint32_t local = round_robin;
  round_robin = (round_robin + 1) % static_cast<uint32_t>(next_seq_.size());
  ProbeHeader header;
  header.seq = take_seq(local);
  header.send_ns = send_ns;
  header.publisher_id = options_.publisher_id;
  header.topic_index = options_.topic_offset + local;
  header.flags = probe ? kFlagProbe : 0;
  if (options_.fields > 0) {
    payload_view_ = field_payload_.build(header);
  } else {
    encode_probe(header, payload_);
  }
  return local;
}

std::string MessageStream::topic_name(uint32_t local_index) const {
  return options_.prefix + "/" + std::to_string(options_.topic_offset + local_index);
}

Producer::Producer(Transport& transport, const ProducerOptions& options)
    : transport_(transport), options_(options), stream_(options) {}

Status Producer::advertise() {
  for (uint32_t i = 0; i < std::max<uint32_t>(options_.topics, 1); ++i) {
    Status s = transport_.advertise(i, stream_.topic_name(i));
    if (!s) return s;
  }
  return Ok{};
}

// Publishes the message just built, waiting out back pressure.
bool Producer::send(bool probe, uint64_t send_ns) {
  uint32_t local = stream_.next(probe, send_ns);
  for (;;) {
    PublishResult r = transport_.publish(local, stream_.payload());
    if (r == PublishResult::Sent) return true;
    if (r == PublishResult::Failed) return false;
    if (transport_.poll(1) < 0) return false;
  }
}

uint64_t probe_stamp(uint64_t due_ns, uint64_t woke_ns, ProducerResult& result) {
  if (woke_ns <= due_ns) return due_ns;
  result.probe_wake_late.record(woke_ns - due_ns);
  return woke_ns;
}

Result<ProducerResult> Producer::run(const volatile std::sig_atomic_t* stop) {
  const ClockKind clock = options_.clock;
  const double cpu_start = process_cpu_seconds();
  const uint64_t start = clock_now_ns(clock);
  const uint64_t end = options_.seconds > 0 ? start + static_cast<uint64_t>(options_.seconds * 1e9) : UINT64_MAX;
  Pacer load(options_.rate, start);
  Pacer probes(options_.probe_rate, start);
  ProducerResult result;
  uint64_t last_poll = start;
  uint64_t now = start;
  uint64_t woke = 0;  // when the last wait ended
  auto failed = [] { return Error{"connection lost while publishing"}; };

  while (!(stop && *stop)) {
    if (options_.count != 0 && result.sent >= options_.count) break;
    now = clock_now_ns(clock);
    if (now >= end) break;
    if (now - last_poll >= kPollEveryNs) {
      if (transport_.poll(0) < 0) return failed();
      last_poll = now;
    }
    // Probes first: they are the measurement, load is the background.
    if (probes.paced() && probes.due_ns(result.probes_sent) <= now) {
      if (!send(true, probe_stamp(probes.due_ns(result.probes_sent), woke, result))) return failed();
      probes.note_sent(result.probes_sent++, now);
      continue;
    }
    if (!load.paced() || load.due_ns(result.sent) <= now) {
      if (!send(false, load.paced() ? load.due_ns(result.sent) : now)) return failed();
      load.note_sent(result.sent++, now);
      continue;
    }
    // Nothing due: write what is buffered, then wait for the next due time.
    uint64_t next = std::min(load.due_ns(result.sent) + options_.load_batch_ns, end);
    // Batched load may leave late (that is what batching means), so only a
    // probe, or load paced exactly, is worth spinning for.
    uint64_t spin = options_.load_batch_ns == 0 ? kSpinNs : 0;
    if (probes.paced() && probes.due_ns(result.probes_sent) <= next) {
      next = probes.due_ns(result.probes_sent);
      spin = kSpinNs;
    }
    if (!transport_.flush()) return failed();
    bool lost = false;
    wait_until(next, clock, spin, [&](int timeout_ms) {
      if (!lost && transport_.poll(timeout_ms) < 0) lost = true;
      last_poll = clock_now_ns(clock);
    });
    if (lost) return failed();
    woke = clock_now_ns(clock);
  }
  const uint64_t stopped = clock_now_ns(clock);
  if (!transport_.flush()) return failed();
  Status synced = transport_.sync(kSyncTimeoutMs);
  if (!synced) return synced.error();

  result.seconds = static_cast<double>(stopped - start) / 1e9;
  result.stop_ns = stopped;
  result.rate = result.seconds > 0 ? static_cast<double>(result.sent) / result.seconds : 0;
  result.saturated = load.saturated(result.sent, stopped) || probes.saturated(result.probes_sent, stopped);
  result.max_lateness_ns = std::max(load.max_lateness_ns(), probes.max_lateness_ns());
  result.cpu_s = process_cpu_seconds() - cpu_start;
  return result;
}

namespace {
nlohmann::ordered_json wake_late_json(const Histogram& h) {
  auto us = [](uint64_t ns) { return std::round(static_cast<double>(ns) / 10.0) / 100.0; };
  return {{"count", h.count()}, {"p50", us(h.value_at_percentile(50))}, {"p99", us(h.value_at_percentile(99))},
          {"max", us(h.max())}};
}
}  // namespace

std::string pub_result_json(const ProducerResult& r, uint32_t publisher_id) {
  auto round3 = [](double v) { return std::round(v * 1000.0) / 1000.0; };
  nlohmann::ordered_json j = {{"role", "pub"},
                              {"id", publisher_id},
                              {"sent", r.sent + r.probes_sent},
                              {"probes_sent", r.probes_sent},
                              {"seconds", round3(r.seconds)},
                              {"stop_ns", r.stop_ns},
                              {"cpu_s", round3(r.cpu_s)},
                              {"rate", std::llround(r.seconds > 0 ? static_cast<double>(r.sent + r.probes_sent) / r.seconds : 0)},
                              {"load_rate", std::llround(r.rate)},
                              {"saturated", r.saturated},
                              {"max_lateness_us", round3(static_cast<double>(r.max_lateness_ns) / 1000.0)},
                              {"probe_wake_late_us", wake_late_json(r.probe_wake_late)}};
  return j.dump();
}

std::string pub_result_text(const ProducerResult& r) {
  char line[256];
  // Both rates, named: --rate paces the load alone, and probes are sent besides it.
  const double all_rate = r.seconds > 0 ? static_cast<double>(r.sent + r.probes_sent) / r.seconds : 0;
  std::snprintf(line, sizeof line,
                "sent %llu load messages + %llu probes in %.3f s: load %.0f msg/s, %.0f msg/s with probes, cpu %.3f s%s",
                static_cast<unsigned long long>(r.sent), static_cast<unsigned long long>(r.probes_sent), r.seconds,
                r.rate, all_rate, r.cpu_s, r.saturated ? " (SATURATED: the publisher could not keep the rate)" : "");
  return line;
}

}  // namespace tw::perf
