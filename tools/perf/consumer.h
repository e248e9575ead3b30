// The receiving side of perf: sequence checking and latency statistics.
//
// Sequence rules per stream (publisher_id, topic_index), docs/perf.md:
//   seq == last + 1         in order
//   seq >  last + 1         GAPS += 1, MISSING += seq - last - 1
//   seq <= last             DUPS += 1
//   initial image           not a message: only sets last = seq
//   first message, seq > 1  a late join (no image, e.g. MQTT/NATS subscriber
//                           started after the publisher): sets last = seq - 1,
//                           counted in late_joins, not as a gap
// (an image or late join also adds the messages before it to before_join)
// Latency = receive time - send_ns of the header, on the same clock.
//
// Allocation: stream state lives in vectors grown when a new publisher or
// topic index first appears; per message nothing is allocated.
// Threading: one owner (the polling thread).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "perf/histogram.h"

namespace tw::perf {

// Larger ids in a header are counted as malformed (they would cost memory).
inline constexpr uint32_t kMaxPublisherId = 1u << 16;
inline constexpr uint32_t kMaxTopicIndex = 1u << 22;
// Stream slots tracked across all publishers: ids come off the network, so a
// hostile or corrupt sender must not make the consumer allocate without bound.
inline constexpr size_t kMaxTrackedStreams = size_t{1} << 22;

struct ConsumerTotals {
  uint64_t received = 0;   // messages (initial images excluded), probes included
  uint64_t probes = 0;
  uint64_t images = 0;     // initial images seen (baselines)
  uint64_t gaps = 0;
  uint64_t missing = 0;
  uint64_t dups = 0;
  uint64_t late_joins = 0;
  uint64_t before_join = 0; // messages of streams sent before this subscriber joined
                            // (image seq, or seq - 1 of a late join): received +
                            // before_join = everything the publishers sent
  uint64_t malformed = 0;  // shorter than the header or ids out of range
  uint64_t missing_fids = 0;  // --fields: value fields absent from a message (OpenMAMA's MISSING FIDS)
  uint64_t wrong_values = 0;  // --fields: value fields whose value is not their message's
  uint64_t publishers = 0; // distinct publisher ids seen
};

// One closed interval (normally one second) of the per-second report.
struct IntervalStats {
  uint64_t t = 0;          // 1 for the first interval
  uint64_t messages = 0;
  double rate = 0;         // messages per second over the interval
  double low_us = 0, avg_us = 0, high_us = 0;
  double p50_us = 0, p99_us = 0, p999_us = 0;
  uint64_t gaps = 0, missing = 0;
};

// One probe as received: when it was sent (its header's send_ns) and when it
// arrived, on the publishers' clock.
struct ProbeArrival {
  uint64_t send_ns = 0;
  uint64_t receive_ns = 0;
};

// The reference reports' latency figures: percentiles, the standard
// deviation, the share of samples under 50 µs and the count over 1 ms.
inline constexpr uint64_t kFastNs = 50'000;
inline constexpr uint64_t kSlowNs = 1'000'000;
struct LatencySummary {
  double min_us = 0, mean_us = 0, p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
  double stddev_us = 0;
  double under_50us = 0;   // share of samples, 0..1
  uint64_t over_1ms = 0;   // samples
  uint64_t count = 0;
};
LatencySummary summarize(const Histogram& histogram);

class Consumer {
 public:
  // fields > 0: payloads are field lists of that many value fields (field_payload.h), each checked.
  explicit Consumer(uint32_t fields = 0) : fields_(fields) {}

  // `now_ns` is on the clock the publishers stamp send_ns with. `is_image`:
  // an IMAGE of data sent before joined() is a cached last value however late
  // it comes (a congested connection's images wait for room, and the answer
  // to a later request may pass them: a broker cascade's edge, a second run
  // against one broker), so a baseline, not a message.
  void on_message(std::span<const uint8_t> payload, bool is_initial_image, uint64_t now_ns, bool is_image = false);
  // The subscriptions are in (the transport's sync() returned), on the publishers' clock.
  void joined(uint64_t now_ns) { joined_ns_ = now_ns; }

  bool started() const { return totals_.received > 0; }
  uint64_t first_ns() const { return first_ns_; }  // first message's receive time
  uint64_t last_ns() const { return last_ns_; }    // latest message's receive time

  // Closes the interval that began at the previous call (or at the first
  // message) and ends at now_ns; resets the interval's statistics.
  IntervalStats take_interval(uint64_t now_ns);

  const ConsumerTotals& totals() const { return totals_; }
  Histogram latency() const;  // all messages: the closed intervals and the open one
  const Histogram& probe_latency() const { return probe_latency_; }

  // Keeps the send and arrival time of the first `capacity` probes (room is
  // reserved here, so recording them never allocates), for lining up slow
  // probes with a scheduler trace (bench/tail_trace). Probes past the
  // capacity are counted in probes_not_logged().
  void keep_probe_arrivals(size_t capacity);
  const std::vector<ProbeArrival>& probe_arrivals() const { return probe_arrivals_; }
  uint64_t probes_not_logged() const { return probes_not_logged_; }

 private:
  struct Stream {
    uint64_t last_seq = 0;
    bool seen = false;
  };
  Stream* stream(uint32_t publisher_id, uint32_t topic_index);
  void check_sequence(Stream& s, uint64_t seq);

  uint32_t fields_;
  std::vector<std::vector<Stream>> streams_;  // [publisher_id][topic_index]
  size_t tracked_streams_ = 0;                // slots allocated in streams_, at most kMaxTrackedStreams
  ConsumerTotals totals_;
  Histogram latency_;
  Histogram probe_latency_;
  Histogram interval_latency_;
  std::vector<ProbeArrival> probe_arrivals_;
  size_t probe_arrival_capacity_ = 0;
  uint64_t probes_not_logged_ = 0;
  uint64_t interval_gaps_ = 0;
  uint64_t interval_missing_ = 0;
  uint64_t interval_start_ns_ = 0;
  uint64_t intervals_ = 0;
  uint64_t first_ns_ = 0;
  uint64_t joined_ns_ = 0;
  uint64_t last_ns_ = 0;
};

// Report lines (docs/perf.md). Text: fixed-width columns, latencies in µs.
std::string interval_header_text();
std::string interval_text(const IntervalStats& s);
std::string interval_json(const IntervalStats& s);

struct SubSummary {
  ConsumerTotals totals;
  LatencySummary latency;
  LatencySummary probe_latency;
  double seconds = 0;  // first to last message
  uint64_t last_ns = 0;  // the last message's arrival on the publishers' clock, 0 = none (perf run's drain ends here)
  double cpu_s = 0;
};
SubSummary make_summary(const Consumer& consumer, double cpu_s);
std::string summary_text(const SubSummary& s);
std::string summary_json(const SubSummary& s);

}  // namespace tw::perf
