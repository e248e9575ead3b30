#include "base/owner_thread.h"

#ifndef NDEBUG
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

namespace tw {

namespace {

// "140234 'tw-ap-0'": the id std::thread prints, and the name if the thread has one.
std::string describe(std::thread::id id, const char* name) {
  std::ostringstream out;
  out << id;
  if (name[0] != '\0') out << " '" << name << "'";
  return out.str();
}

}  // namespace

void OwnerThread::claim() {
  remember_owner_name();
  owner_.store(std::this_thread::get_id(), std::memory_order_release);
}

void OwnerThread::check_slow(const char* what) const {
  const std::thread::id self = std::this_thread::get_id();
  std::thread::id owner{};
  if (owner_.compare_exchange_strong(owner, self, std::memory_order_acq_rel)) {
    remember_owner_name();  // unclaimed: the first user owns it
    return;
  }
  if (owner == self) return;
  char self_name[16] = {};
  pthread_getname_np(pthread_self(), self_name, sizeof self_name);
  char owner_name[17] = {};
  const uint64_t words[2] = {owner_name_[0].load(std::memory_order_relaxed),
                             owner_name_[1].load(std::memory_order_relaxed)};
  std::memcpy(owner_name, words, sizeof words);
  std::fprintf(stderr, "tickwire: %s used on thread %s, owned by thread %s (docs/ARCHITECTURE.md, \"Threads\")\n",
               what, describe(self, self_name).c_str(), describe(owner, owner_name).c_str());
  std::abort();
}

void OwnerThread::remember_owner_name() const {
  char name[16] = {};
  pthread_getname_np(pthread_self(), name, sizeof name);
  uint64_t words[2];
  std::memcpy(words, name, sizeof words);
  owner_name_[0].store(words[0], std::memory_order_relaxed);
  owner_name_[1].store(words[1], std::memory_order_relaxed);
}

}  // namespace tw
#endif
