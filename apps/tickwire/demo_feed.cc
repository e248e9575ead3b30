// tickwire demo-feed [--symbols 500] [--rate 1000] [--prefix DEMO/EQ] [--seconds S] [--seed N]
//                   [--provider | --mode broadcast|provider]
// Broadcast mode (default) publishes a simulated market: a full image per
// symbol (kPublishImage), then quote and trade updates at the given total
// rate. Images are re-published after a reconnect, since a restarted broker
// has lost its cache. Provider mode serves the prefix's service (its first
// level, e.g. DEMO) interactively: only topics under the prefix that a
// subscriber asks for, NOT_FOUND for symbols outside the market.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>

#include "base/clock.h"
#include "topic/topic.h"
#include "common.h"
#include "demo_market.h"
#include "market_provider.h"

namespace tw::cli {

namespace {

struct DemoOptions {
  size_t symbols = 500;
  double rate = 1000;    // updates per second across all symbols; 0 = as fast as possible
  std::string prefix = "DEMO/EQ";
  double seconds = 0;    // 0 = until interrupted
  uint64_t seed = 1;
  std::string mode = "broadcast";  // or "provider"
  bool provider = false;           // --provider: same as --mode provider
};

constexpr size_t kMaxBatch = 4096;  // publishes between polls, so input and heartbeats keep flowing

class DemoFeed {
 public:
  DemoFeed(client::Client& client, DemoMarket& market) : client_(client), market_(market) {}

  Status advertise(const std::string& prefix) {
    ids_.reserve(market_.size());
    for (size_t i = 0; i < market_.size(); ++i) {
      auto id = client_.advertise(prefix + "/" + market_.symbol(i), wire::PayloadKind::FieldList);
      if (!id) return id.error();
      ids_.push_back(*id);
    }
    return Ok{};
  }

  void publish_images() {
    for (size_t i = 0; i < market_.size() && !g_stop_requested; ++i) {
      size_t n = market_.encode_image(i, buffer_, realtime_ns());
      publish(ids_[i], n, true);
      if (i % 256 == 255) client_.poll(0);
    }
  }

  void publish_updates(uint64_t count) {
    for (uint64_t k = 0; k < count; ++k) {
      size_t symbol = 0;
      size_t n = market_.next_update(buffer_, realtime_ns(), symbol);
      publish(ids_[symbol], n, false);
    }
  }

  uint64_t updates() const { return updates_; }
  uint64_t dropped() const { return dropped_; }

 private:
  // Waits out back pressure; drops only while disconnected (the images are re-sent on reconnect).
  void publish(client::PublisherId id, size_t size, bool image) {
    std::span<const uint8_t> payload(buffer_.data(), size);
    while (!client_.publish(id, payload, image)) {
      if (!client_.connected() || g_stop_requested) {
        ++dropped_;
        return;
      }
      client_.poll(1);
    }
    if (!image) ++updates_;
  }

  client::Client& client_;
  DemoMarket& market_;
  std::vector<client::PublisherId> ids_;
  std::array<uint8_t, 1024> buffer_{};  // one reused payload buffer: no allocation per message
  uint64_t updates_ = 0;
  uint64_t dropped_ = 0;
};

int run_demo_provider(const DemoOptions& opts, DemoMarket& market, const CommonOptions& common) {
  auto options = client_options(common, "tickwire-demo-feed");
  if (!options) {
    std::fprintf(stderr, "tickwire demo-feed: %s\n", options.error().message.c_str());
    return kExitError;
  }
  client::Client client;
  client.on_connection([&](client::ConnectionEvent event, std::string_view reason) {
    std::fprintf(stderr, "tickwire demo-feed: %s%s%.*s\n", client::event_name(event), reason.empty() ? "" : ": ",
                 static_cast<int>(reason.size()), reason.data());
  });
  if (!connect_or_report(client, *options)) return kExitError;
  MarketProviderOptions po;
  po.service = std::string(topic::service_of(opts.prefix));
  po.pattern = opts.prefix + "/>";
  po.rate = opts.rate;
  po.seconds = opts.seconds;
  po.known_symbols.emplace();
  for (size_t i = 0; i < market.size(); ++i) po.known_symbols->insert(market.symbol(i));
  po.log_streams = false;
  po.name = "demo-feed";
  MarketProvider provider(client, market, std::move(po));
  if (Status started = provider.start(); !started) {
    std::fprintf(stderr, "tickwire demo-feed: %s\n", started.error().message.c_str());
    return kExitError;
  }
  std::printf("demo-feed: providing %zu symbols under %s/ on request at %g updates/s\n", market.size(),
              opts.prefix.c_str(), opts.rate);
  std::fflush(stdout);
  int rc = provider.run();
  const MarketProviderSummary& s = provider.summary();
  std::printf("demo-feed: %llu requests (%llu not found), %llu releases, sent %llu updates\n",
              static_cast<unsigned long long>(s.requests), static_cast<unsigned long long>(s.not_found),
              static_cast<unsigned long long>(s.releases), static_cast<unsigned long long>(s.updates));
  client.close();
  return rc;
}

int run_demo_feed(const DemoOptions& opts, const CommonOptions& common) {
  auto dict = dictionary(common);
  if (!dict) {
    std::fprintf(stderr, "tickwire demo-feed: %s\n", dict.error().message.c_str());
    return kExitError;
  }
  auto market = DemoMarket::create(**dict, opts.symbols, opts.seed);
  if (!market) {
    std::fprintf(stderr, "tickwire demo-feed: %s\n", market.error().message.c_str());
    return kExitError;
  }
  if (opts.provider || opts.mode == "provider") return run_demo_provider(opts, *market, common);
  auto options = client_options(common, "tickwire-demo-feed");
  if (!options) {
    std::fprintf(stderr, "tickwire demo-feed: %s\n", options.error().message.c_str());
    return kExitError;
  }
  client::Client client;
  DemoFeed feed(client, *market);
  if (Status advertised = feed.advertise(opts.prefix); !advertised) {
    std::fprintf(stderr, "tickwire demo-feed: %s\n", advertised.error().message.c_str());
    return kExitError;
  }
  bool republish = false;
  bool fatal = false;
  client.on_connection([&](client::ConnectionEvent event, std::string_view reason) {
    std::fprintf(stderr, "tickwire demo-feed: %s%s%.*s\n", client::event_name(event), reason.empty() ? "" : ": ",
                 static_cast<int>(reason.size()), reason.data());
    if (event == client::ConnectionEvent::Reconnected) republish = true;
  });
  client.on_error([&](const client::ErrorInfo& e) {
    std::fprintf(stderr, "tickwire demo-feed: broker error %s: %.*s\n", wire::code_name(e.code),
                 static_cast<int>(e.text.size()), e.text.data());
    fatal = e.code == wire::Code::KindMismatch || e.code == wire::Code::InvalidTopic;
  });
  if (!connect_or_report(client, *options)) return kExitError;

  feed.publish_images();
  std::printf("demo-feed: publishing %zu symbols under %s/ at %g updates/s\n", market->size(), opts.prefix.c_str(),
              opts.rate);
  std::fflush(stdout);

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  uint64_t due_total = 0;
  while (!g_stop_requested && !fatal) {
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (opts.seconds > 0 && elapsed >= opts.seconds) break;
    if (republish) {
      republish = false;
      feed.publish_images();
    }
    uint64_t target = opts.rate > 0 ? static_cast<uint64_t>(elapsed * opts.rate) : due_total + kMaxBatch;
    // Far behind (a stall or a reconnect): skip ahead rather than burst.
    if (opts.rate > 0 && target > due_total + static_cast<uint64_t>(opts.rate)) due_total = target - kMaxBatch;
    uint64_t batch = std::min<uint64_t>(target > due_total ? target - due_total : 0, kMaxBatch);
    if (client.connected()) feed.publish_updates(batch);
    due_total += batch;
    bool caught_up = due_total >= target;
    int wait_ms = caught_up && opts.rate > 0 ? std::clamp(static_cast<int>(1000.0 / opts.rate), 1, 10) : 0;
    if (client.poll(wait_ms) < 0) {
      std::fprintf(stderr, "tickwire demo-feed: connection lost\n");
      return kExitError;
    }
  }
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("demo-feed: sent %llu updates in %.1f s (%llu dropped while disconnected)\n",
              static_cast<unsigned long long>(feed.updates()), elapsed,
              static_cast<unsigned long long>(feed.dropped()));
  client.close();
  return fatal ? kExitError : kExitOk;
}

}  // namespace

void add_demo_feed_command(CLI::App& app, const CommonOptions& common, int& exit_code) {
  auto opts = std::make_shared<DemoOptions>();
  CLI::App* cmd = app.add_subcommand("demo-feed", "publish a simulated equity market");
  cmd->add_option("--symbols", opts->symbols, "number of symbols (60 real tickers, then SYM0001...)")
      ->check(CLI::Range(size_t{1}, size_t{1'000'000}));
  cmd->add_option("--rate", opts->rate, "updates per second across all symbols, 0 = as fast as possible")
      ->check(non_negative_number());
  cmd->add_option("--prefix", opts->prefix, "topic prefix");
  cmd->add_option("--seconds", opts->seconds, "stop after S seconds (0 = run until interrupted)")
      ->check(non_negative_number());
  cmd->add_option("--seed", opts->seed, "random seed, for a reproducible market");
  cmd->add_option("--mode", opts->mode, "broadcast (publish every symbol) or provider (serve topics on request)")
      ->check(CLI::IsMember({"broadcast", "provider"}));
  cmd->add_flag("--provider", opts->provider, "same as --mode provider");
  cmd->callback([opts, &common, &exit_code]() { exit_code = run_demo_feed(*opts, common); });
}

}  // namespace tw::cli
