#include "tier/loop_inbox.h"

namespace tw::tier {

void LoopInbox::post(Job job) {
  std::lock_guard lock(mutex_);
  jobs_.push_back(std::move(job));
  pending_.store(true, std::memory_order_release);
}

void LoopInbox::run_pending() {
  if (!pending_.load(std::memory_order_acquire)) return;
  std::vector<Job> taken;
  {
    std::lock_guard lock(mutex_);
    taken.swap(jobs_);
    pending_.store(false, std::memory_order_relaxed);
  }
  for (Job& job : taken) job();
}

}  // namespace tw::tier
