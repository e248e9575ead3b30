// The sending side of perf: a load stream at --rate and, interleaved, a probe
// stream at --probe-rate, both round robin over the topics (docs/perf.md).
//
// Every payload starts with the probe header. send_ns is the intended send
// time when the stream is paced (so a sender stall shows up as latency, not
// as missing samples) and the actual time when unpaced (--rate 0). One
// exception, for probes: a probe that fell due while the publisher slept is
// stamped when the sleep ended. The kernel woke the publisher late (on a busy
// VM a timer fires ~70 us late at the median); that is the load generator's
// lateness, not the broker's, and it is reported apart (probe_wake_late).
// A probe that fell due while the publisher was busy or held by back
// pressure keeps its intended time.
// Probes and load share each topic's sequence, so gap detection covers both.
#pragma once
#include <csignal>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tickwire/base/result.h"
#include "perf/field_payload.h"
#include "perf/histogram.h"
#include "perf/probe.h"
#include "perf/transport.h"

namespace tw::perf {

struct ProducerOptions {
  std::string prefix = "PERF";
  uint32_t topics = 1;
  uint32_t topic_offset = 0;  // topics are PREFIX/offset .. PREFIX/(offset+topics-1)
  uint32_t publisher_id = 0;
  size_t payload_size = 64;   // >= kProbeHeaderSize
  double rate = 0;            // load messages per second, 0 = as fast as possible
  double probe_rate = 0;      // probes per second, 0 = none
  // The load may wait up to this long and leave in a burst, so a fast paced
  // load does not keep the sender spinning on a small machine. Its messages
  // keep their intended send times (their latency includes the wait); probes
  // always leave on time.
  uint64_t load_batch_ns = 0;
  double seconds = 10;        // 0 = until count (or a stop signal)
  uint64_t count = 0;         // load messages, 0 = until seconds
  uint64_t skip_seq = 0;      // test aid: topic 0 never uses this seq (a gap of 1)
  uint32_t fields = 0;        // > 0: field-list payloads of this many value fields (field_payload.h), not payload_size
  ClockKind clock = ClockKind::Monotonic;
};

// The payloads, in order. No allocation after construction.
class MessageStream {
 public:
  MessageStream(const ProducerOptions& options);
  // Writes the next message's header (load or probe, each with its own round
  // robin over the topics) and returns its local topic index.
  uint32_t next(bool probe, uint64_t send_ns);
  std::span<const uint8_t> payload() const { return payload_view_; }
  std::string topic_name(uint32_t local_index) const;

 private:
  uint64_t take_seq(uint32_t local_index);

  ProducerOptions options_;
  std::vector<uint64_t> next_seq_;  // per local topic
  std::vector<uint8_t> payload_;
  FieldPayload field_payload_;
  std::span<const uint8_t> payload_view_;  // payload_, or the field list just built
  uint32_t next_load_topic_ = 0;
  uint32_t next_probe_topic_ = 0;
};

struct ProducerResult {
  uint64_t sent = 0;          // load messages (the JSON's "sent" adds the probes)
  uint64_t probes_sent = 0;
  double seconds = 0;         // first to last send
  uint64_t stop_ns = 0;       // when the send loop ended, on the --clock clock: perf run's drain starts here
  double cpu_s = 0;
  double rate = 0;            // load messages per second achieved
  bool saturated = false;     // fell more than 10% behind the schedule
  uint64_t max_lateness_ns = 0;
  Histogram probe_wake_late;  // per late-woken probe: wake time - due time
};

// A probe's send_ns: its due time, or the end of the wait it fell due in
// (recorded in result.probe_wake_late).
uint64_t probe_stamp(uint64_t due_ns, uint64_t woke_ns, ProducerResult& result);

class Producer {
 public:
  Producer(Transport& transport, const ProducerOptions& options);
  // Advertises every topic (call before or after connect).
  Status advertise();
  // Sends until seconds/count are done or *stop becomes non-zero; then flushes
  // and waits (sync) until the server has everything.
  Result<ProducerResult> run(const volatile std::sig_atomic_t* stop);

 private:
  bool send(bool probe, uint64_t send_ns);

  Transport& transport_;
  ProducerOptions options_;
  MessageStream stream_;
};

std::string pub_result_json(const ProducerResult& r, uint32_t publisher_id);
std::string pub_result_text(const ProducerResult& r);

}  // namespace tw::perf
