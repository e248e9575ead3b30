// tickwire perf pub: the load generator of `tickwire perf` (docs/perf.md).
//   tickwire perf pub --topics N --rate R --size B [--seconds D] [--count C] [--prefix PERF]
//       [--transport native|mqtt|nats|mqtt-raw|nats-raw] [--server HOST:PORT] [--id K] [--topic-offset O]
//       [--probe-rate P] [--skip-seq S] [--clock monotonic|realtime] [--json]
#include <cstdio>
#include <memory>

#include "perf/consumer.h"
#include "perf/pacer.h"
#include "perf/producer.h"
#include "perf/transport.h"
#include "perf/field_payload.h"
#include "perf_commands.h"

namespace tw::cli {

namespace {

struct PerfPubOptions {
  perf::ProducerOptions producer;
  std::string transport = "native";
  std::string clock = "monotonic";
  double load_batch_us = 0;
  bool json = false;
};

int fail(const std::string& message) {
  std::fprintf(stderr, "tickwire perf pub: %s\n", message.c_str());
  return kExitError;
}

int run_perf_pub(PerfPubOptions opts, const CommonOptions& common) {
  perf::use_precise_timers();
  auto kind = perf::parse_transport(opts.transport);
  if (!kind) return fail(kind.error().message);
  auto clock = perf::parse_clock(opts.clock);
  if (!clock) return fail(clock.error().message);
  opts.producer.clock = *clock;
  opts.producer.load_batch_ns = static_cast<uint64_t>(opts.load_batch_us * 1000);
  if (opts.producer.seconds <= 0 && opts.producer.count == 0)
    return fail("give --seconds or --count, or the run never ends");
  auto server = perf::resolve_server(*kind, common.server);
  if (!server) return fail(server.error().message);

  auto made = perf::make_transport(*kind, "tickwire-perf-pub-" + std::to_string(opts.producer.publisher_id),
                                   perf_tls(common), payload_format(opts.producer.fields));
  if (!made) return fail(made.error().message);
  auto transport = std::move(*made);
  perf::Producer producer(*transport, opts.producer);
  if (Status s = producer.advertise(); !s) return fail(s.error().message);
  if (Status s = transport->connect(server->host, server->port); !s) return fail(s.error().message);

  auto result = producer.run(&g_stop_requested);
  transport->close();
  if (!result) return fail(result.error().message);
  std::string line = opts.json ? perf::pub_result_json(*result, opts.producer.publisher_id)
                               : perf::pub_result_text(*result);
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace

void add_perf_pub_command(CLI::App& perf, const CommonOptions& common, int& exit_code) {
  auto opts = std::make_shared<PerfPubOptions>();
  perf::ProducerOptions& p = opts->producer;
  CLI::App* cmd = perf.add_subcommand("pub", "publish a measured load: N topics round robin at a fixed rate");
  cmd->add_option("--topics", p.topics, "number of topics (PREFIX/O .. PREFIX/O+N-1)")
      ->check(CLI::Range(1u, perf::kMaxTopicIndex));
  cmd->add_option("--rate", p.rate, "load messages per second in total, 0 = as fast as possible")
      ->check(non_negative_number());
  cmd->add_option("--size", p.payload_size, "payload bytes, >= 32 (the probe header)")
      ->check(CLI::Range(perf::kProbeHeaderSize, size_t{16u << 20}));
  cmd->add_option("--seconds", p.seconds, "how long to publish, 0 = until --count")->check(non_negative_number());
  cmd->add_option("--fields", p.fields,
                  "publish field lists of this many value fields (native only; replaces --size): the probe header "
                  "in FID 1, FID 100+i = seq * 1000 + i")
      ->check(CLI::Range(0u, perf::kMaxFields));
  cmd->add_option("--count", p.count, "stop after this many load messages (0 = no limit)");
  cmd->add_option("--prefix", p.prefix, "topic prefix");
  cmd->add_option("--transport", opts->transport, "native, mqtt, nats, mqtt-raw or nats-raw")
      ->check(CLI::IsMember(perf::transport_names()));
  cmd->add_option("--id", p.publisher_id, "publisher id written in every header")
      ->check(CLI::Range(0u, perf::kMaxPublisherId - 1));
  cmd->add_option("--topic-offset", p.topic_offset, "index of the first topic");
  cmd->add_option("--probe-rate", p.probe_rate, "latency probes per second, sent besides the load")
      ->check(non_negative_number());
  cmd->add_option("--load-batch-us", opts->load_batch_us,
                  "let the load wait up to this long and leave in bursts (probes stay on time)")
      ->check(non_negative_number());
  cmd->add_option("--skip-seq", p.skip_seq, "test aid: topic 0 skips this sequence number (one gap)");
  cmd->add_option("--clock", opts->clock, "clock of send_ns: monotonic (one host) or realtime (synced hosts)")
      ->check(CLI::IsMember({"monotonic", "realtime"}));
  cmd->add_flag("--json", opts->json, "print the result as one JSON line");
  cmd->callback([opts, &common, &exit_code]() { exit_code = run_perf_pub(*opts, common); });
}

}  // namespace tw::cli
