// The broker's hot path, in process: split a PUBLISH frame off an input
// buffer, decode it, merge it into the channel's cache, encode the UPDATE
// once into the turn's arena and queue it by reference to N subscribers;
// every 64 messages, end the "turn": one writev per subscriber (to /dev/null)
// and reset the arena, as the reactor does.
//
// Reported per message: ns (Google Benchmark's time), heap allocations
// (counted by a replaced global operator new; must be 0), and write syscalls.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "output/fanout.h"
#include "broker/router.h"
#include "native/encoder.h"
#include "tickwire/fields/field_list.h"
#include "io/out_queue.h"
#include "tickwire/wire/codec.h"

namespace {
std::atomic<uint64_t> g_allocations{0};
}

void* operator new(size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
// (free() pairs with the malloc() in operator new above; GCC cannot see that.)

namespace {
using namespace tw;

// A subscriber connection without a peer: the real OutQueue, writing to /dev/null.
class NullOutlet final : public broker::Outlet {
 public:
  explicit NullOutlet(output::Fanout& fanout, int fd) : fanout_(fanout), writer_(fd) {}
  void send_image(const cache::Channel&, uint32_t) override {}
  void send_delivery(const broker::Delivery& d) override {
    out_.append_ref(d.frames.get(native::NativeEncoder::instance()));
    fanout_.mark_dirty(this);
  }
  void flush_output() override { (void)out_.flush(writer_); }
  std::string_view name() const override { return "bench"; }
  uint64_t write_calls() const { return out_.write_calls(); }

 private:
  output::Fanout& fanout_;
  io::FdWriter writer_;
  io::OutQueue out_;
};

// A quote update as a feed handler sends it: BID, ASK, BIDSIZE, ASKSIZE, QUOTIM.
std::vector<uint8_t> publish_frame(uint32_t publish_id, int64_t tick) {
  uint8_t payload[128];
  fields::FieldListWriter w({payload, sizeof payload});
  w.add_decimal(22, {18925 + tick % 7, -2});
  w.add_decimal(25, {18927 + tick % 5, -2});
  w.add_int(30, 100 + tick % 13);
  w.add_int(31, 200 + tick % 11);
  w.add_time(1025, 1'700'000'000'000'000'000ull + static_cast<uint64_t>(tick));
  size_t n = w.finish();
  std::vector<uint8_t> frame(wire::kPublishFixedSize + n);
  frame.resize(wire::encode(frame, wire::Publish{publish_id, false, {payload, n}}));
  return frame;
}

void BM_PublishFanout(benchmark::State& state) {
  const int subscribers = static_cast<int>(state.range(0));
  const int topics = 1000;
  int devnull = ::open("/dev/null", O_WRONLY);
  output::Fanout fanout(8u << 20);
  broker::Router router({}, fanout);
  std::vector<std::unique_ptr<NullOutlet>> outlets;
  for (int i = 0; i < subscribers; ++i) {
    outlets.push_back(std::make_unique<NullOutlet>(fanout, devnull));
    (void)router.subscribe(outlets.back().get(), "BENCH/>");
  }
  // One input buffer holding a PUBLISH per topic, as a read() would deliver them.
  std::vector<cache::ChannelId> channel_of(topics + 1);
  std::vector<uint8_t> input;
  for (int t = 0; t < topics; ++t) {
    (void)router.advertise("BENCH/SYM" + std::to_string(t), wire::PayloadKind::FieldList, channel_of[t + 1]);
    auto f = publish_frame(static_cast<uint32_t>(t + 1), t);
    input.insert(input.end(), f.begin(), f.end());
  }
  // Warm up: every channel's image holds its fields, so steady state starts.
  for (int t = 1; t <= topics; ++t) {
    auto f = publish_frame(static_cast<uint32_t>(t), 0);
    wire::Frame frame;
    (void)wire::split_frame(f, 1u << 20, frame);
    wire::Publish p;
    (void)wire::decode(frame, p);
    (void)router.publish(channel_of[t], p.payload, false);
  }
  fanout.flush_all();

  uint64_t allocations_before = g_allocations.load();
  uint64_t writes_before = 0;
  for (auto& o : outlets) writes_before += o->write_calls();
  size_t pos = 0;
  uint64_t messages = 0;
  for (auto _ : state) {
    wire::Frame frame;
    if (wire::split_frame({input.data() + pos, input.size() - pos}, 1u << 20, frame) != wire::SplitResult::Frame) {
      pos = 0;
      continue;
    }
    pos += frame.size;
    wire::Publish p;
    if (!wire::decode(frame, p)) state.SkipWithError("decode failed");
    auto outcome = router.publish(channel_of[p.publish_id], p.payload, false);
    benchmark::DoNotOptimize(outcome);
    if (++messages % 64 == 0) fanout.flush_all();
  }
  fanout.flush_all();
  uint64_t writes = 0;
  for (auto& o : outlets) writes += o->write_calls();
  double n = static_cast<double>(messages ? messages : 1);
  state.counters["allocs_per_msg"] = static_cast<double>(g_allocations.load() - allocations_before) / n;
  state.counters["writev_per_msg"] = static_cast<double>(writes - writes_before) / n;
  state.counters["deliveries_per_msg"] = subscribers;
  state.SetItemsProcessed(static_cast<int64_t>(messages));
  ::close(devnull);
}
BENCHMARK(BM_PublishFanout)->Arg(1)->Arg(5)->Arg(50)->Arg(500);

}  // namespace

BENCHMARK_MAIN();
