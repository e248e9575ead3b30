// Proof that the tiered broker's hot path allocates nothing per message.
//
// A tiered broker (1 gateway + 1 access point) is wired by hand from the
// public APIs, as src/tier/broker.cc does, on 127.0.0.1, port 0. Its two
// threads count their heap allocations (a replaced global operator new that
// counts only on threads that set a thread_local flag; the client side, on
// the main thread, is not counted). The main thread speaks the native
// protocol over raw sockets: 1 publisher, 5 subscribers of every channel.
// After a warm-up the counters are reset, N field-list updates are published
// and read by every subscriber, and the allocations on the broker threads
// per message are reported. Exit code 1 when they are not 0.
//
// The publisher stays at most a window of messages ahead of the slowest
// subscriber, so no subscriber becomes a slow consumer (whose conflation
// would legitimately merge updates) and every subscriber must see every
// update, checked by the per-channel sequence numbers.
#include <execinfo.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "base/log.h"
#include "cache/directory.h"
#include "config/config.h"
#include "tickwire/fields/field_list.h"
#include "io/socket.h"
#include "tier/access_point.h"
#include "tier/gateway.h"
#include "tier/link.h"
#include "tickwire/wire/codec.h"

// --- allocation counting, on the threads that ask for it

namespace {
thread_local bool t_count_allocations = false;  // trivially initialised: safe inside operator new
std::atomic<uint64_t> g_allocations{0};
std::atomic<uint64_t> g_allocated_bytes{0};

// TW_TRACE_ALLOCS=1: print the stack of each allocation counted during the
// measured run, to find the culprit when the result is not 0.
std::atomic<bool> g_trace{false};

void note_allocation(size_t n) {
  if (!t_count_allocations) return;
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  g_allocated_bytes.fetch_add(n, std::memory_order_relaxed);
  if (g_trace.load(std::memory_order_relaxed)) {
    void* frames[32];
    const int depth = backtrace(frames, 32);
    char line[64];
    const int len = std::snprintf(line, sizeof line, "--- allocation of %zu bytes:\n", n);
    (void)!::write(2, line, static_cast<size_t>(len));
    backtrace_symbols_fd(frames, depth, 2);  // does not allocate
  }
}
}  // namespace

void* operator new(size_t n) {
  note_allocation(n);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new(size_t n, std::align_val_t align) {
  note_allocation(n);
  const size_t a = static_cast<size_t>(align);
  if (void* p = std::aligned_alloc(a, (n + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
// (free() pairs with the malloc() in operator new above; GCC cannot see that.)

namespace {
using namespace tw;
using Clock = std::chrono::steady_clock;

constexpr int kSubscribers = 5;
constexpr int kTopics = 100;
constexpr uint64_t kWarmup = 10'000;
constexpr uint64_t kDefaultMessages = 200'000;
constexpr size_t kPayloadBytes = 100;
// Messages the publisher may be ahead of the slowest subscriber while measuring
// (--window). It bounds how many deliveries one access-point turn can queue to
// a subscriber; above io::OutQueue's initial 1024 references, a busy turn
// grows that queue once, mid-run (see the report line "window").
constexpr uint64_t kDefaultWindow = 512;
constexpr uint64_t kBatch = 256;        // PUBLISH frames per write
constexpr int kStallTimeoutMs = 10'000;  // a safety net against a hang, never a performance bound

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "tier_alloc_bench: %s\n", what);
  std::exit(2);
}

// --- the broker, wired as src/tier/broker.cc wires it

broker::RouterLimits router_limits_for(const config::BrokerConfig& c) {
  broker::RouterLimits l;
  l.topic = {c.limits.max_topic_length, c.limits.max_topic_depth};
  l.max_subscriptions = c.limits.max_subscriptions;
  l.max_channels = c.limits.max_channels;
  return l;
}

struct TieredBroker {
  explicit TieredBroker(const config::BrokerConfig& c)
      : config(c),
        limits(router_limits_for(config)),
        directory(1, config.limits.max_channels),
        gateway(config, limits, directory),
        access_point(config, limits, open_connections, config.limits.max_partial_input),
        link(std::max<size_t>(8u << 20, 4 * (size_t{config.limits.max_frame} + 4096))) {
    gateway.connect({&link}, {&access_point.waker()});
    access_point.attach_gateways(directory, {&link}, {&gateway.waker()});
  }

  uint16_t listen() {
    auto fd = io::listen_tcp("127.0.0.1", 0);
    if (!fd) die(fd.error().message.c_str());
    listen_fd = *fd;
    access_point.accept_for({{listen_fd, protocols.find("native"), nullptr, "native tcp"}}, {&access_point});
    return io::local_port(listen_fd);
  }

  void start() {
    gateway_thread = std::thread([this] {
      t_count_allocations = true;
      gateway.run(stop_gateway);
    });
    access_point_thread = std::thread([this] {
      t_count_allocations = true;
      access_point.run(stop_access_point);
    });
  }

  // Access point first: its goodbyes may still send records to the gateway.
  void stop() {
    stop_access_point.store(true);
    access_point.waker().notify_always();
    access_point_thread.join();
    stop_gateway.store(true);
    gateway.waker().notify_always();
    gateway_thread.join();
    io::close_fd(listen_fd);
  }

  config::BrokerConfig config;
  broker::RouterLimits limits;
  tier::Protocols protocols = tier::builtin_protocols();  // before the access point: its sessions point into it
  std::atomic<uint32_t> open_connections{0};
  cache::ChannelDirectory directory;
  tier::Gateway gateway;
  tier::AccessPoint access_point;
  tier::Link link;
  int listen_fd = -1;
  std::atomic<bool> stop_gateway{false}, stop_access_point{false};
  std::thread gateway_thread, access_point_thread;
};

// --- a raw native-protocol connection (main thread only)

class Conn {
 public:
  explicit Conn(uint16_t port) {
    auto fd = io::connect_tcp("127.0.0.1", port, kStallTimeoutMs);
    if (!fd) die(fd.error().message.c_str());
    fd_ = *fd;  // non-blocking, TCP_NODELAY
    in_.resize(1u << 20);
  }
  ~Conn() { io::close_fd(fd_); }
  int fd() const { return fd_; }

  // Writes what the socket takes now; returns how many bytes.
  size_t write_some(const uint8_t* data, size_t n) {
    ssize_t rc = ::send(fd_, data, n, MSG_NOSIGNAL);
    if (rc < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
      die("send failed");
    }
    return static_cast<size_t>(rc);
  }
  void write_all(std::span<const uint8_t> bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      done += write_some(bytes.data() + done, bytes.size() - done);
      if (done < bytes.size()) wait_for(POLLOUT);
    }
  }
  template <typename Encode>
  void send(Encode&& encode) {
    uint8_t buf[1024];
    const size_t n = encode(std::span<uint8_t>(buf, sizeof buf));
    if (n == 0) die("frame does not fit");
    write_all({buf, n});
  }

  // Reads what the socket has now and calls on_frame for each complete frame.
  template <typename OnFrame>
  void read_frames(OnFrame&& on_frame) {
    if (end_ == in_.size()) compact();
    ssize_t rc = ::recv(fd_, in_.data() + end_, in_.size() - end_, 0);
    if (rc == 0) die("the broker closed a connection");
    if (rc < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      die("recv failed");
    }
    end_ += static_cast<size_t>(rc);
    wire::Frame frame;
    while (true) {
      auto r = wire::split_frame({in_.data() + start_, end_ - start_}, wire::kDefaultMaxFrame, frame);
      if (r == wire::SplitResult::NeedMore) break;
      if (r != wire::SplitResult::Frame) die("malformed frame from the broker");
      start_ += frame.size;
      on_frame(frame);
    }
    compact();
  }
  // Blocks until a frame of `type` arrives (other frames are ignored).
  void await(wire::MsgType type) {
    bool seen = false;
    while (!seen) {
      wait_for(POLLIN);
      read_frames([&](const wire::Frame& f) {
        if (f.type == wire::MsgType::Error) die("the broker answered ERROR");
        seen |= f.type == type;
      });
    }
  }

 private:
  void wait_for(short events) {
    pollfd p{fd_, events, 0};
    if (::poll(&p, 1, kStallTimeoutMs) <= 0) die("no progress: timed out waiting for the broker");
  }
  void compact() {
    if (start_ == 0) return;
    std::memmove(in_.data(), in_.data() + start_, end_ - start_);
    end_ -= start_;
    start_ = 0;
  }
  int fd_ = -1;
  std::vector<uint8_t> in_;
  size_t start_ = 0, end_ = 0;
};

void hello(Conn& c, const char* name) {
  c.send([&](std::span<uint8_t> out) { return wire::encode(out, wire::Hello{1, 1, 0, name}); });
  c.await(wire::MsgType::Welcome);
}

// A quote update of exactly kPayloadBytes: prices, sizes, time and a text field.
std::vector<uint8_t> make_payload(uint64_t tick) {
  auto build = [tick](std::span<uint8_t> out, size_t text_len) {
    static const std::string kText(kPayloadBytes, 'x');
    fields::FieldListWriter w(out);
    w.add_decimal(22, {18925 + static_cast<int64_t>(tick % 7), -2});
    w.add_decimal(25, {18927 + static_cast<int64_t>(tick % 5), -2});
    w.add_int(30, 100 + static_cast<int64_t>(tick % 13));
    w.add_int(31, 200 + static_cast<int64_t>(tick % 11));
    w.add_time(1025, 1'700'000'000'000'000'000ull + tick);
    w.add_string(3, std::string_view(kText).substr(0, text_len));
    return w.finish();
  };
  std::vector<uint8_t> payload(2 * kPayloadBytes);
  const size_t without_text = build(payload, 0);
  if (without_text == 0 || without_text > kPayloadBytes) die("payload layout");
  const size_t n = build(payload, kPayloadBytes - without_text);
  if (n != kPayloadBytes) die("payload is not 100 bytes");
  payload.resize(n);
  return payload;
}

// The client side of the run: one publisher, kSubscribers subscribers.
class Clients {
 public:
  explicit Clients(uint16_t port) : publisher_(port) {
    for (int i = 0; i < kSubscribers; ++i) subscribers_.push_back(std::make_unique<Conn>(port));
    for (auto& s : subscribers_) {
      hello(*s, "bench-subscriber");
      s->send([](std::span<uint8_t> out) {
        return wire::encode(out, wire::MsgType::Subscribe, wire::Subscribe{1, "BENCH/>"});
      });
      s->await(wire::MsgType::Ack);
    }
    hello(publisher_, "bench-publisher");
    for (uint32_t t = 1; t <= kTopics; ++t) {
      const std::string topic = "BENCH/SYM" + std::to_string(t);
      publisher_.send([&](std::span<uint8_t> out) {
        return wire::encode(out, wire::Register{t, wire::PayloadKind::FieldList, topic});
      });
    }
    received_.assign(kSubscribers, 0);
    next_seq_.assign(kSubscribers, std::vector<uint64_t>(1024, 0));
    // Pre-encoded frames, one per topic and tick parity, so the loop only copies.
    for (int parity = 0; parity < 2; ++parity) {
      const auto payload = make_payload(static_cast<uint64_t>(parity));
      for (uint32_t t = 1; t <= kTopics; ++t) {
        std::vector<uint8_t> frame(wire::kPublishFixedSize + payload.size());
        frame.resize(wire::encode(frame, wire::Publish{t, false, payload}));
        frames_.push_back(std::move(frame));
      }
    }
  }

  // Publishes `count` more messages, at most `window` ahead of the slowest
  // subscriber, and returns once every subscriber has them all.
  void run(uint64_t count, uint64_t window) {
    const uint64_t target = sent_ + count;
    std::vector<uint8_t> out;
    size_t out_pos = 0;
    while (slowest() < target) {
      if (out_pos == out.size() && sent_ < target && sent_ - slowest() < window) {
        out.clear();
        out_pos = 0;
        const uint64_t n = std::min({kBatch, target - sent_, window - (sent_ - slowest())});
        for (uint64_t i = 0; i < n; ++i, ++sent_) {
          const auto& f = frames_[(sent_ / kTopics % 2) * kTopics + sent_ % kTopics];
          out.insert(out.end(), f.begin(), f.end());
        }
      }
      if (out_pos < out.size()) out_pos += publisher_.write_some(out.data() + out_pos, out.size() - out_pos);
      poll_subscribers(out_pos < out.size());
    }
  }

  uint64_t sequence_errors() const { return sequence_errors_; }

 private:
  uint64_t slowest() const { return *std::min_element(received_.begin(), received_.end()); }

  void poll_subscribers(bool publisher_blocked) {
    pollfd fds[kSubscribers + 1];
    for (int i = 0; i < kSubscribers; ++i) fds[i] = {subscribers_[static_cast<size_t>(i)]->fd(), POLLIN, 0};
    fds[kSubscribers] = {publisher_.fd(), static_cast<short>(publisher_blocked ? POLLOUT : 0), 0};
    if (::poll(fds, kSubscribers + 1, kStallTimeoutMs) <= 0) die("no progress: timed out waiting for deliveries");
    for (size_t i = 0; i < kSubscribers; ++i) {
      if (fds[i].revents == 0) continue;
      subscribers_[i]->read_frames([&](const wire::Frame& f) { on_frame(i, f); });
    }
  }

  // IMAGE or UPDATE of a channel: one delivered message; sequence numbers per
  // channel must follow on (IMAGE seq S, then S+1 ...): nothing lost or merged.
  void on_frame(size_t sub, const wire::Frame& f) {
    uint32_t channel = 0;
    uint64_t seq = 0;
    if (f.type == wire::MsgType::Update) {
      wire::Update u;
      if (!wire::decode(f, u)) die("bad UPDATE");
      channel = u.channel_id;
      seq = u.seq;
      if (channel >= next_seq_[sub].size() || next_seq_[sub][channel] != seq) ++sequence_errors_;
    } else if (f.type == wire::MsgType::Image) {
      wire::Image m;
      if (!wire::decode(f, m)) die("bad IMAGE");
      channel = m.channel_id;
      seq = m.seq;
    } else if (f.type == wire::MsgType::Error || f.type == wire::MsgType::Status) {
      die("the broker sent ERROR or STATUS during the run");
    } else {
      return;  // CHANNEL introductions, heartbeats
    }
    if (channel >= next_seq_[sub].size()) die("channel id out of range");
    next_seq_[sub][channel] = seq + 1;
    ++received_[sub];
  }

  Conn publisher_;
  std::vector<std::unique_ptr<Conn>> subscribers_;
  std::vector<std::vector<uint8_t>> frames_;
  std::vector<uint64_t> received_;
  std::vector<std::vector<uint64_t>> next_seq_;  // [subscriber][channel id]
  uint64_t sent_ = 0;
  uint64_t sequence_errors_ = 0;
};

config::BrokerConfig bench_config() {
  config::BrokerConfig c;
  c.listen = "127.0.0.1:0";
  c.gateways = 1;
  c.access_points = 1;
  c.heartbeat_ms = 3'600'000;  // no heartbeats or idle timeouts during the run
  c.idle_timeout_ms = 86'400'000;
  c.log_level = log::Level::Error;  // the shutdown goodbyes are expected
  if (auto ok = config::validate(c); !ok) die(ok.error().message.c_str());
  return c;
}

uint64_t option(int argc, char** argv, const char* name, uint64_t fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::strtoull(argv[i + 1], nullptr, 10);
  }
  return fallback;
}

}  // namespace

// tier_alloc_bench [--messages N] [--window W]
int main(int argc, char** argv) {
  const uint64_t messages = std::max<uint64_t>(1, option(argc, argv, "--messages", kDefaultMessages));
  const uint64_t window = std::max<uint64_t>(1, option(argc, argv, "--window", kDefaultWindow));
  const config::BrokerConfig config = bench_config();
  log::set_level(config.log_level);
  TieredBroker broker(config);
  const uint16_t port = broker.listen();
  broker.start();

  uint64_t setup_allocations = 0, allocations = 0, bytes = 0, sequence_errors = 0;
  double seconds = 0;
  {
    Clients clients(port);
    // Warm-up, as one burst: channels created, images sized, rings, queues
    // and socket backlogs at their working size.
    clients.run(kWarmup, kWarmup);
    const uint64_t allocations_before = g_allocations.load();
    setup_allocations = allocations_before;
    const uint64_t bytes_before = g_allocated_bytes.load();
    if (std::getenv("TW_TRACE_ALLOCS") != nullptr) {
      void* warm[1];
      backtrace(warm, 1);  // loads the unwinder now, not inside a counted allocation
      g_trace.store(true);
    }
    const auto start = Clock::now();
    clients.run(messages, window);
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
    allocations = g_allocations.load() - allocations_before;
    g_trace.store(false);
    bytes = g_allocated_bytes.load() - bytes_before;
    sequence_errors = clients.sequence_errors();
    broker.stop();  // before the clients close, so they are not counted as departures
  }

  const double per_message = static_cast<double>(allocations) / static_cast<double>(messages);
  std::printf("tiered broker, 1 gateway + 1 access point, %d subscribers, %zu-byte field-list payload\n",
              kSubscribers, kPayloadBytes);
  std::printf("  messages published     %llu (after %llu warm-up)\n", static_cast<unsigned long long>(messages),
              static_cast<unsigned long long>(kWarmup));
  std::printf("  window                 %llu messages ahead of the slowest subscriber\n",
              static_cast<unsigned long long>(window));
  std::printf("  deliveries             %llu\n", static_cast<unsigned long long>(messages * kSubscribers));
  std::printf("  sequence errors        %llu\n", static_cast<unsigned long long>(sequence_errors));
  std::printf("  time                   %.3f s\n", seconds);
  std::printf("  throughput             %.0f messages/s (%.0f deliveries/s)\n", messages / seconds,
              messages * kSubscribers / seconds);
  std::printf("  broker-thread allocs   %llu (%llu bytes)\n", static_cast<unsigned long long>(allocations),
              static_cast<unsigned long long>(bytes));
  // Connections, channels and buffers do allocate while they are set up: a
  // counter that saw nothing then would be a counter that does not work.
  std::printf("  setup + warm-up allocs %llu (the counter is live)\n",
              static_cast<unsigned long long>(setup_allocations));
  if (setup_allocations == 0) die("the allocation counter saw nothing on the broker threads");
  const bool pass = allocations == 0 && sequence_errors == 0;
  std::printf("RESULT: %s: %.6f allocations per message on the broker threads, %.0f messages/s\n",
              pass ? "PASS" : "FAIL", per_message, messages / seconds);
  return pass ? 0 : 1;
}
