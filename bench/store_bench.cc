// store_bench: what this disk can do for durable appends, and what the log
// store's group commit (src/store) makes of it, in one run on one directory.
//
//   disk, one record per sync:  pwrite(size) + fdatasync, back to back (the
//                               latency floor of one acknowledged record)
//   disk, group-commit bandwidth: pwrite(1 MiB) + fdatasync, back to back
//                               (the most bytes per second a sync-per-batch
//                               writer can get from this disk)
//   store:                      N submitters, each with up to W records in
//                               flight, through store::Committer: records/s,
//                               MB/s, submit-to-acknowledgement p50/p99, the
//                               batches it made
//
// usage: store_bench DIR [--size BYTES] [--seconds S] [--submitters N] [--window W]
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "store/committer.h"

namespace {

struct Options {
  std::string dir;
  size_t size = 1024;
  double seconds = 5;
  int submitters = 5;
  int window = 64;
};

double percentile(std::vector<uint64_t>& ns, double p) {
  if (ns.empty()) return 0;
  std::sort(ns.begin(), ns.end());
  return static_cast<double>(ns[std::min(ns.size() - 1, static_cast<size_t>(p * static_cast<double>(ns.size())))]) / 1e3;
}

// Writes `chunk` bytes and fdatasyncs, back to back, for the run's time: syncs/s, MB/s, sync latency.
void disk(const Options& o, size_t chunk, const char* label) {
  const std::string path = o.dir + "/disk.bench";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) std::perror(path.c_str()), std::exit(1);
  std::vector<uint8_t> buffer(chunk, 0xAB);
  std::vector<uint64_t> latencies;
  const uint64_t start = tw::monotonic_ns(), end = start + static_cast<uint64_t>(o.seconds * 1e9);
  uint64_t offset = 0;
  while (tw::monotonic_ns() < end) {
    const uint64_t t0 = tw::monotonic_ns();
    if (::pwrite(fd, buffer.data(), chunk, static_cast<off_t>(offset)) != static_cast<ssize_t>(chunk) ||
        ::fdatasync(fd) != 0) {
      std::perror("disk"), std::exit(1);
    }
    latencies.push_back(tw::monotonic_ns() - t0);
    offset += chunk;
    if (offset > (1ull << 30)) offset = 0;  // stay within 1 GiB of disk
  }
  const double took = static_cast<double>(tw::monotonic_ns() - start) / 1e9;
  ::close(fd);
  ::unlink(path.c_str());
  const double syncs = static_cast<double>(latencies.size()) / took;
  std::printf("%-32s %10.0f syncs/s %10.1f MB/s   sync p50 %8.1f us  p99 %8.1f us\n", label, syncs,
              syncs * static_cast<double>(chunk) / 1e6, percentile(latencies, 0.5), percentile(latencies, 0.99));
}

void store(const Options& o) {
  const std::string dir = o.dir + "/log.bench";
  std::filesystem::remove_all(dir);
  auto log = tw::store::Log::open(dir);
  if (!log) std::fprintf(stderr, "%s\n", log.error().message.c_str()), std::exit(1);
  std::mutex mutex;
  std::vector<uint64_t> latencies;
  std::atomic<uint64_t> acked{0}, failed{0};
  const std::vector<uint8_t> payload(o.size, 0xCD);
  tw::store::Committer::Stats stats;
  const uint64_t start = tw::monotonic_ns(), end = start + static_cast<uint64_t>(o.seconds * 1e9);
  {
    tw::store::Committer committer(**log);
    std::vector<std::thread> threads;
    for (int s = 0; s < o.submitters; ++s) {
      threads.emplace_back([&, s] {
        std::mutex window_mutex;
        std::condition_variable freed;
        int in_flight = 0;
        std::vector<uint64_t> mine;
        const std::string topic = "Q/" + std::to_string(s);
        while (tw::monotonic_ns() < end) {
          {
            std::unique_lock lock(window_mutex);
            freed.wait(lock, [&] { return in_flight < o.window; });
            ++in_flight;
          }
          const uint64_t t0 = tw::monotonic_ns();
          committer.submit({tw::realtime_ns(), 0, topic, payload, [&, t0](const tw::Result<uint64_t>& r) {
                              (r ? acked : failed).fetch_add(1);
                              std::lock_guard lock(window_mutex);
                              mine.push_back(tw::monotonic_ns() - t0);
                              --in_flight;
                              freed.notify_one();
                            }});
        }
        std::unique_lock lock(window_mutex);
        freed.wait(lock, [&] { return in_flight == 0; });  // the drain: every record acknowledged
        std::lock_guard all(mutex);
        latencies.insert(latencies.end(), mine.begin(), mine.end());
      });
    }
    for (auto& t : threads) t.join();
    stats = committer.stats();
  }
  const double took = static_cast<double>(tw::monotonic_ns() - start) / 1e9;
  const double rate = static_cast<double>(acked.load()) / took;
  std::printf("%-32s %10.0f recs/s %10.1f MB/s   ack p50 %8.1f us  p99 %8.1f us   %lu batches (%.1f recs each), %lu failed, "
              "%.1f s incl. drain\n",
              ("store, " + std::to_string(o.submitters) + " x window " + std::to_string(o.window)).c_str(), rate,
              rate * static_cast<double>(o.size) / 1e6, percentile(latencies, 0.5), percentile(latencies, 0.99),
              static_cast<unsigned long>(stats.batches),
              stats.batches ? static_cast<double>(stats.records) / static_cast<double>(stats.batches) : 0.0,
              static_cast<unsigned long>(failed.load()), took);
  std::filesystem::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (argc < 2) {
    std::fprintf(stderr, "usage: store_bench DIR [--size BYTES] [--seconds S] [--submitters N] [--window W]\n");
    return 2;
  }
  o.dir = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--size") o.size = std::stoul(value);
    else if (flag == "--seconds") o.seconds = std::stod(value);
    else if (flag == "--submitters") o.submitters = std::stoi(value);
    else if (flag == "--window") o.window = std::stoi(value);
    else return std::fprintf(stderr, "unknown option %s\n", flag.c_str()), 2;
  }
  std::filesystem::create_directories(o.dir);
  std::printf("store_bench: %s, %zu-byte records, %.0f s per row\n", o.dir.c_str(), o.size, o.seconds);
  disk(o, o.size, "disk, one record per sync");
  disk(o, 1u << 20, "disk, 1 MiB per sync");
  store(o);
  return 0;
}
