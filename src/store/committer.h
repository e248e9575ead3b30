// Committer: group commit for a Log, on a thread of its own. Loops submit
// records and go on; the committer takes everything submitted since its last
// turn as one batch, appends it, makes it durable with one fdatasync, and
// only then tells each submitter its record's sequence number (or why it was
// not stored: a full disk fails the whole batch, and nothing of it counts as
// stored). So the cost of a sync is shared by every record that arrived
// while the previous one ran, and no loop thread ever waits for a disk.
//
// The hand-over is a mutex-guarded vector swapped once per batch: a lock per
// guaranteed record, which direct messaging never takes.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tickwire/base/result.h"
#include "store/log.h"

namespace tw::store {

class Committer {
 public:
  // Called on the committer's thread once the record is durable (its seq) or will not be (the error).
  using Done = std::function<void(const Result<uint64_t>& stored)>;
  struct Append {
    uint64_t timestamp_ns = 0;
    uint8_t flags = 0;
    std::string topic;
    std::vector<uint8_t> payload;
    Done done;
  };
  struct Stats {
    uint64_t batches = 0;
    uint64_t records = 0;
    uint64_t failed = 0;      // records refused (their batch's write or sync failed)
    uint64_t sync_ns = 0;     // time spent in sync, all batches
    uint64_t max_sync_ns = 0;
  };

  explicit Committer(Log& log);
  // Commits what was submitted, then stops the thread.
  ~Committer();
  Committer(const Committer&) = delete;
  Committer& operator=(const Committer&) = delete;

  void submit(Append append);
  // A copy, taken under the lock.
  Stats stats() const;

 private:
  void run();
  void commit(std::vector<Append>& batch);

  Log& log_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Append> submitted_;
  bool stopping_ = false;
  Stats stats_;
  std::thread thread_;
};

}  // namespace tw::store
