#include "store/sync_crew.h"

#include <string>

#include "base/affinity.h"

namespace tw::store {

SyncCrew::SyncCrew(size_t helpers) {
  for (size_t i = 0; i < helpers; ++i) helpers_.emplace_back([this] { help(); });
}

SyncCrew::~SyncCrew() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  start_.notify_all();
  for (std::thread& t : helpers_) t.join();
}

void SyncCrew::run(size_t count, const std::function<void(size_t)>& job) {
  if (count <= 1 || helpers_.empty()) {
    for (size_t i = 0; i < count; ++i) job(i);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    job_ = &job;
    count_ = count;
    next_.store(0, std::memory_order_relaxed);
    working_ = helpers_.size();
    ++run_number_;
  }
  start_.notify_all();
  take_jobs();
  std::unique_lock lock(mutex_);
  done_.wait(lock, [this] { return working_ == 0; });
  job_ = nullptr;
}

// Jobs are taken one at a time until none is left: a slow sync holds up only its own taker.
void SyncCrew::take_jobs() {
  for (size_t i = next_.fetch_add(1, std::memory_order_relaxed); i < count_; i = next_.fetch_add(1, std::memory_order_relaxed)) {
    (*job_)(i);
  }
}

void SyncCrew::help() {
  name_current_thread("tw-store-sync");
  uint64_t seen = 0;
  std::unique_lock lock(mutex_);
  for (;;) {
    start_.wait(lock, [&] { return stopping_ || run_number_ != seen; });
    if (stopping_) return;
    seen = run_number_;
    lock.unlock();
    take_jobs();
    lock.lock();
    if (--working_ == 0) done_.notify_one();
  }
}

}  // namespace tw::store
