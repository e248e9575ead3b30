// SyncCrew: makes a group commit's syncs happen at the same time. A batch
// appended to N logs (a guaranteed publish at fan-out N: N queues) becomes
// durable with N fdatasyncs; one after another they take N times one sync,
// while the disk takes them together (the filesystem commits its journal
// once for the syncs that arrive at once, and the device queues the
// writes). run() hands the jobs out to the caller and the crew's helper
// threads, and returns when every one is done. Not per message: per batch,
// and only when the batch touched more than one log.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tw::store {

class SyncCrew {
 public:
  // `helpers`: threads besides the caller (0: run() does everything itself).
  explicit SyncCrew(size_t helpers);
  ~SyncCrew();
  SyncCrew(const SyncCrew&) = delete;
  SyncCrew& operator=(const SyncCrew&) = delete;

  // Calls job(i) once for each i in [0, count), on the caller and the
  // helpers at once; returns when all have returned. One caller at a time.
  void run(size_t count, const std::function<void(size_t)>& job);

 private:
  void help();
  void take_jobs();

  std::mutex mutex_;
  std::condition_variable start_;
  std::condition_variable done_;
  const std::function<void(size_t)>* job_ = nullptr;  // the current run's, under mutex_
  size_t count_ = 0;
  std::atomic<size_t> next_{0};  // the next job index to take
  size_t working_ = 0;           // helpers not yet done with the current run
  uint64_t run_number_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> helpers_;
};

}  // namespace tw::store
