// wake_floor: the latency floor of this machine for the broker comparison's
// probe workload (publisher -> broker -> S subscribers over TCP loopback).
//
// The "broker" here is a null relay: one epoll loop that forwards the
// publisher's bytes to every subscriber and does nothing else. It still pays
// everything the topology costs: the relay is woken by the publisher's write,
// each subscriber process is woken by the relay's write, and on a small VM each
// of those wake-ups is an IPI (~18 µs) or worse. A broker pays the same
// wake-ups plus its own work, so these numbers are the floor of the machine
// for the workload (within the run-to-run noise of a shared VM);
// docs/benchmarks.md shows them next to the brokers, measured in the same run. The publisher paces load and probes like `perf pub`
// (batched load, probes on exact times with a final spin), and percentiles
// are merged over subscribers like `perf run` does (the worst connection).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "base/affinity.h"
#include "base/clock.h"
#include "base/rotation.h"
#include "perf/pacer.h"
#include "perf/producer.h"
#include "perf/run/proc_stats.h"

namespace {

constexpr size_t kRecord = 100;         // fixed-size records: no framing needed
constexpr size_t kBuffer = 64 * 1024;
constexpr uint64_t kWarmupNs = 200'000'000;
constexpr uint8_t kLoad = 0, kProbe = 1;  // record byte 8; bytes 0-7 are send_ns

struct Options {
  int subscribers = 5;
  int sub_processes = 0;  // 0: one per subscriber
  double rate = 100000, probe_rate = 2000, seconds = 2;
  uint64_t batch_ns = 200'000;
  uint32_t relay_slice_us = 100;  // as tickwired's loop_slice_us default; 0: the kernel's
  int relays = 1;                 // 2: a chain, the floor of a broker cascade's one hop (core -> edge)
};

uint64_t now_ns() { return tw::monotonic_ns(); }

[[noreturn]] void die(const char* what) {
  std::perror(what);
  _exit(2);
}

void write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) die("write");
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void set_nodelay(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) die("TCP_NODELAY");
}

sockaddr_in loopback(uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

int listen_any_port(uint16_t& port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr = loopback(0);
  socklen_t len = sizeof addr;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(fd, 64) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    die("listen");
  port = ntohs(addr.sin_port);
  return fd;
}

int connect_to(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr = loopback(port);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) die("connect");
  set_nodelay(fd);
  return fd;
}

int accept_one(int listener) {
  int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) die("accept");
  set_nodelay(fd);
  return fd;
}

// The null relay: its downstream first (the subscribers, or the next relay
// of a chain, once that one says go), then the publisher, which is told to go.
// It asks for the scheduler slice a broker's loop thread asks for.
void run_relay(const std::function<std::vector<int>()>& downstream, int pub_listener, uint32_t slice_us) {
  if (slice_us != 0) {
    if (auto slice = tw::set_current_thread_slice(slice_us); !slice) {
      std::fprintf(stderr, "relay: scheduler slice: %s\n", slice.error().message.c_str());
      _exit(2);
    }
  }
  std::vector<int> subs = downstream();
  int pub = accept_one(pub_listener);
  write_all(pub, "g", 1);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  epoll_event interest{};
  interest.events = EPOLLIN;
  if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, pub, &interest) != 0) die("epoll");
  static char buffer[kBuffer];
  tw::Rotation rotation;
  for (;;) {
    epoll_event ready;
    if (epoll_wait(ep, &ready, 1, -1) < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    ssize_t got = read(pub, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) die("relay read");
    if (got == 0) break;  // publisher done: closing the subscribers ends them
    // Starting one subscriber further along each turn, as tickwired's flush does.
    const size_t first = rotation.start(subs.size());
    for (size_t k = 0; k < subs.size(); ++k)
      write_all(subs[tw::Rotation::at(first, k, subs.size())], buffer, static_cast<size_t>(got));
  }
}

void put_record(char* at, uint64_t send_ns, uint8_t kind) {
  std::memcpy(at, &send_ns, sizeof send_ns);
  at[sizeof send_ns] = static_cast<char>(kind);
}

// Returns the number of measured probes sent. Paced by perf's own Pacer,
// wait_until and probe_stamp, so the floor is scheduled exactly like perf pub.
uint64_t run_publisher(int fd, const Options& o) {
  using tw::perf::ClockKind;
  prctl(PR_SET_TIMERSLACK, 1UL);
  char go;
  if (read(fd, &go, 1) != 1) die("publisher: relay never said go");
  static char buffer[kBuffer];
  const uint64_t start = now_ns(), measure_from = start + kWarmupNs;
  const uint64_t end = measure_from + static_cast<uint64_t>(o.seconds * 1e9);
  const tw::perf::Pacer load(o.rate, start), probes(o.probe_rate, start);
  tw::perf::ProducerResult stamps;  // probe_stamp's record of late wakes
  uint64_t load_i = 0, probe_i = 0, measured = 0, woke = 0;
  for (uint64_t now = now_ns(); now < end; now = now_ns()) {
    size_t n = 0;
    for (; probes.due_ns(probe_i) <= now && n + kRecord <= kBuffer; ++probe_i, n += kRecord) {
      uint64_t due = probes.due_ns(probe_i);
      measured += due >= measure_from;
      put_record(buffer + n, tw::perf::probe_stamp(due, woke, stamps), due >= measure_from ? kProbe : kLoad);
    }
    for (; load.due_ns(load_i) <= now && n + kRecord <= kBuffer; ++load_i, n += kRecord)
      put_record(buffer + n, load.due_ns(load_i), kLoad);
    write_all(fd, buffer, n);
    uint64_t next = std::min(load.due_ns(load_i) + o.batch_ns, end), spin = 0;
    if (probes.due_ns(probe_i) <= next) next = probes.due_ns(probe_i), spin = tw::perf::kSpinNs;
    tw::perf::wait_until(next, ClockKind::Monotonic, spin, [](int timeout_ms) { poll(nullptr, 0, timeout_ms); });
    woke = now_ns();
  }
  return measured;
}

struct Connection {
  int fd;
  std::vector<char> pending = std::vector<char>(kBuffer + kRecord);
  size_t have = 0;
  std::vector<uint64_t> latencies;
};

// Reads what arrived and measures the complete probe records; false at EOF.
bool receive(Connection& c) {
  ssize_t got = read(c.fd, c.pending.data() + c.have, c.pending.size() - c.have);
  if (got < 0 && errno == EINTR) return true;
  if (got < 0) die("subscriber read");
  if (got == 0) return false;
  c.have += static_cast<size_t>(got);
  size_t at = 0;
  for (; at + kRecord <= c.have; at += kRecord) {
    if (c.pending[at + 8] != kProbe) continue;
    uint64_t sent, now = now_ns();
    std::memcpy(&sent, c.pending.data() + at, sizeof sent);
    c.latencies.push_back(now > sent ? now - sent : 0);
  }
  std::memmove(c.pending.data(), c.pending.data() + at, c.have - at);
  c.have -= at;
  return true;
}

uint64_t nearest_rank(const std::vector<uint64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

void run_subscribers(uint16_t port, int count, int report_fd, const Options& o) {
  std::vector<Connection> conns(static_cast<size_t>(count));
  std::vector<pollfd> fds;
  for (Connection& c : conns) {
    c.fd = connect_to(port);
    c.latencies.reserve(static_cast<size_t>(o.probe_rate * (o.seconds + 1)) + 1024);
    fds.push_back({c.fd, POLLIN, 0});
  }
  // Ready connections are read starting one further along each time, as perf sub does.
  tw::Rotation rotation;
  for (int open = count; open > 0;) {
    if (poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) die("poll");
    const size_t first = rotation.start(fds.size());
    for (size_t k = 0; k < fds.size(); ++k) {
      const size_t i = tw::Rotation::at(first, k, fds.size());
      if (fds[i].revents != 0 && !receive(conns[i])) fds[i].fd = -1, --open;
    }
  }
  for (Connection& c : conns) {
    std::vector<uint64_t>& v = c.latencies;
    std::sort(v.begin(), v.end());
    std::string line = "conn " + std::to_string(v.size());
    for (double p : {50.0, 90.0, 99.0, 99.9, 100.0}) line += " " + std::to_string(nearest_rank(v, p));
    line += " " + std::to_string(v.empty() ? 0 : v.front()) + "\n";
    write_all(report_fd, line.data(), line.size());
  }
}

template <typename Body>
pid_t spawn(int report_read_fd, const Options& o, Body body) {
  pid_t pid = fork();
  if (pid < 0) die("fork");
  if (pid > 0) return pid;
  close(report_read_fd);
  alarm(static_cast<unsigned>(o.seconds) + 30);  // bounded even if a peer hangs
  body();
  _exit(0);
}

void usage() {
  std::puts(
      "wake_floor: probe latency pub -> null relay -> S subs over TCP loopback (the floor any broker pays).\n"
      "  --subscribers S (5)  --sub-processes P, 1 or S (S)  --rate R load/s (100000)\n"
      "  --probe-rate R (2000)  --load-batch-us U (200)  --seconds T measured after 200 ms warm-up (2)\n"
      "  --relay-slice-us U: the relay's scheduler slice, as tickwired's loop_slice_us (100; 0: the kernel's)\n"
      "  --relays N: 1, or 2 relays in a chain (pub -> relay -> relay -> subs: a cascade's hop) (1)\n"
      "Prints one JSON line; each percentile is the worst over the S connections.");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") usage(), std::exit(0);
    if (i + 1 >= argc) usage(), std::exit(1);
    double v = std::atof(argv[++i]);
    if (a == "--subscribers") o.subscribers = static_cast<int>(v);
    else if (a == "--sub-processes") o.sub_processes = static_cast<int>(v);
    else if (a == "--rate") o.rate = v;
    else if (a == "--probe-rate") o.probe_rate = v;
    else if (a == "--load-batch-us") o.batch_ns = static_cast<uint64_t>(v * 1000);
    else if (a == "--seconds") o.seconds = v;
    else if (a == "--relay-slice-us") o.relay_slice_us = static_cast<uint32_t>(v);
    else if (a == "--relays") o.relays = static_cast<int>(v);
    else usage(), std::exit(1);
  }
  if (o.sub_processes == 0) o.sub_processes = o.subscribers;
  if (o.subscribers < 1 || o.sub_processes < 1 || o.subscribers % o.sub_processes != 0 || o.rate <= 0 ||
      o.probe_rate <= 0 || o.seconds <= 0 || o.relays < 1 || o.relays > 2)
    std::fprintf(stderr, "bad options (see --help)\n"), std::exit(1);
  return o;
}

struct Merged {
  unsigned long long probes = 0, received = 0, min = UINT64_MAX, worst[5] = {};  // p50 p90 p99 p999 max
  int conns = 0;
};

// Children write one line each: "probes N" (publisher) or, per connection,
// "conn COUNT P50 P90 P99 P999 MAX MIN" in ns.
Merged read_reports(int fd) {
  Merged m;
  FILE* in = fdopen(fd, "r");
  char line[256];
  unsigned long long n, p[5], lo;
  while (in && std::fgets(line, sizeof line, in)) {
    if (std::sscanf(line, "probes %llu", &n) == 1) m.probes = n;
    if (std::sscanf(line, "conn %llu %llu %llu %llu %llu %llu %llu", &n, &p[0], &p[1], &p[2], &p[3], &p[4], &lo) != 7)
      continue;
    ++m.conns, m.received += n, m.min = std::min(m.min, lo);
    for (int i = 0; i < 5; ++i) m.worst[i] = std::max(m.worst[i], p[i]);
  }
  return m;
}

// Forks the relays, subscriber processes and publisher; returns their pids.
std::vector<pid_t> start_children(const Options& o, const int report[2]) {
  uint16_t sub_port = 0, pub_port = 0, last_pub_port = 0;
  int sub_listener = listen_any_port(sub_port), pub_listener = listen_any_port(pub_port);
  int last_pub_listener = o.relays == 2 ? listen_any_port(last_pub_port) : pub_listener;
  auto subscribers = [&] {
    std::vector<int> subs;
    for (int i = 0; i < o.subscribers; ++i) subs.push_back(accept_one(sub_listener));
    return subs;
  };
  // The first relay of a chain forwards to the last one, as a publisher of it.
  auto next_relay = [&] {
    int next = connect_to(last_pub_port);
    char go;
    if (read(next, &go, 1) != 1) die("relay: the next relay never said go");
    return std::vector<int>{next};
  };
  std::vector<pid_t> pids{spawn(report[0], o, [&] { run_relay(subscribers, last_pub_listener, o.relay_slice_us); })};
  if (o.relays == 2) pids.push_back(spawn(report[0], o, [&] { run_relay(next_relay, pub_listener, o.relay_slice_us); }));
  for (int p = 0; p < o.sub_processes; ++p)
    pids.push_back(spawn(report[0], o, [&] { run_subscribers(sub_port, o.subscribers / o.sub_processes, report[1], o); }));
  pids.push_back(spawn(report[0], o, [&] {
    std::string line = "probes " + std::to_string(run_publisher(connect_to(pub_port), o)) + "\n";
    write_all(report[1], line.data(), line.size());
  }));
  close(sub_listener), close(pub_listener);
  if (o.relays == 2) close(last_pub_listener);
  return pids;
}

int reap(const std::vector<pid_t>& pids) {
  int failed = 0;
  for (pid_t pid : pids) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  return failed;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) die("pipe");
  const auto machine_start = tw::perf::run::machine_ticks();
  std::vector<pid_t> pids = start_children(o, report);
  close(report[1]);
  const Merged m = read_reports(report[0]);
  const int failed = reap(pids);
  const double steal = tw::perf::run::steal_percent(machine_start, tw::perf::run::machine_ticks());
  const unsigned long long expected = m.probes * static_cast<unsigned>(o.subscribers);
  const unsigned long long lost = expected - std::min(m.received, expected);
  auto us = [](unsigned long long ns) { return static_cast<double>(ns) / 1000.0; };
  std::printf(
      "{\"tool\":\"wake_floor\",\"subscribers\":%d,\"sub_processes\":%d,\"rate\":%.0f,\"probe_rate\":%.0f,"
      "\"load_batch_us\":%.0f,\"relay_slice_us\":%u,\"relays\":%d,\"seconds\":%g,\"probes\":%llu,\"p50_us\":%.3f,"
      "\"p90_us\":%.3f,\"p99_us\":%.3f,\"p999_us\":%.3f,\"max_us\":%.3f,\"min_us\":%.3f,\"lost\":%llu,"
      "\"failed_children\":%d,\"steal_pct\":%.2f}\n",
      o.subscribers, o.sub_processes, o.rate, o.probe_rate, static_cast<double>(o.batch_ns) / 1000.0,
      o.relay_slice_us, o.relays, o.seconds, m.probes, us(m.worst[0]), us(m.worst[1]), us(m.worst[2]), us(m.worst[3]),
      us(m.worst[4]), us(m.conns ? m.min : 0), lost, failed, steal);
  return failed == 0 && m.conns == o.subscribers && lost == 0 ? 0 : 1;
}
