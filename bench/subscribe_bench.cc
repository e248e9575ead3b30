// SUBSCRIBE throughput on one connection as its subscription count grows
// (issue 18: subscribing was quadratic in the connection's pattern count).
// Each run builds a router and subscribes one outlet to N distinct exact
// topics, half of them with a cached channel (which sends an image), then
// unsubscribes them all. Linear cost shows as the same ns per subscription
// (items_per_second) at 10K, 50K and 200K.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "output/fanout.h"
#include "broker/router.h"

namespace {
using namespace tw;

// Counts what the router sends; the router's cost is what is measured.
class CountingOutlet final : public broker::Outlet {
 public:
  void send_image(const cache::Channel&, uint32_t) override { ++sent; }
  void send_delivery(const broker::Delivery&) override { ++sent; }
  void send_status(const cache::Channel&, wire::ChannelState, wire::Code, std::string_view, bool) override { ++sent; }
  void flush_output() override {}
  std::string_view name() const override { return "bench"; }
  uint64_t sent = 0;
};

void BM_SubscribeOneConnection(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<std::string> topics;
  topics.reserve(n);
  for (size_t i = 0; i < n; ++i) topics.push_back("FEED/G" + std::to_string(i % 97) + "/T" + std::to_string(i));
  broker::RouterLimits limits;
  limits.max_subscriptions = n;
  limits.max_channels = n;
  for (auto _ : state) {
    state.PauseTiming();
    output::Fanout fanout(1 << 20);
    auto router = std::make_unique<broker::Router>(limits, fanout);
    for (size_t i = 0; i < n; i += 2) {
      cache::ChannelId id = 0;
      router->advertise(topics[i], wire::PayloadKind::Opaque, id);
      const uint8_t payload[] = {1, 2, 3};
      router->publish(id, payload, true);
    }
    CountingOutlet outlet;
    state.ResumeTiming();
    for (const std::string& t : topics) {
      if (!router->subscribe(&outlet, t).ok()) state.SkipWithError("subscribe refused");
    }
    for (const std::string& t : topics) router->unsubscribe(&outlet, t);
    benchmark::DoNotOptimize(outlet.sent);
    state.PauseTiming();
    router.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
  state.counters["subscriptions"] = static_cast<double>(n);
}
BENCHMARK(BM_SubscribeOneConnection)->Arg(10'000)->Arg(50'000)->Arg(200'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
