#include "store/committer.h"

#include <algorithm>

#include "base/clock.h"

namespace tw::store {

Committer::Committer(Log& log) : log_(log), thread_([this] { run(); }) {}

Committer::~Committer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void Committer::submit(Append append) {
  {
    std::lock_guard lock(mutex_);
    submitted_.push_back(std::move(append));
  }
  wake_.notify_one();
}

Committer::Stats Committer::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void Committer::run() {
  std::vector<Append> batch;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !submitted_.empty(); });
      if (submitted_.empty()) return;  // stopping, and everything committed
      batch.swap(submitted_);
    }
    commit(batch);
    batch.clear();
  }
}

// A record that cannot be stored at all fails alone; a failed write or sync
// (a full disk) fails the whole batch, even records that may have reached
// the disk: a submitter told "not stored" may send again (a duplicate), one
// told "stored" must never lose it.
void Committer::commit(std::vector<Append>& batch) {
  std::vector<Result<uint64_t>> stored;
  stored.reserve(batch.size());
  Status io = Ok{};
  for (const Append& a : batch) {
    if (Status valid = Log::check(a.topic, a.payload.size()); !valid) {
      stored.push_back(valid.error());
    } else {
      stored.push_back(io ? log_.append(a.timestamp_ns, a.flags, a.topic, a.payload) : Result<uint64_t>(io.error()));
      if (io && !stored.back()) io = stored.back().error();
    }
  }
  const uint64_t start = monotonic_ns();
  if (io) io = log_.sync();
  const uint64_t took = monotonic_ns() - start;
  uint64_t failed = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!io && stored[i]) stored[i] = io.error();
    failed += stored[i] ? 0 : 1;
    if (batch[i].done) batch[i].done(stored[i]);
  }
  std::lock_guard lock(mutex_);
  ++stats_.batches;
  stats_.records += batch.size() - failed;
  stats_.failed += failed;
  stats_.sync_ns += took;
  stats_.max_sync_ns = std::max(stats_.max_sync_ns, took);
}

}  // namespace tw::store
