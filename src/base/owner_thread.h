// OwnerThread: the debug-build check that an object is used only by the
// thread that owns it. State in Tickwire has one owner thread
// (docs/ARCHITECTURE.md, "Threads"); this makes a violation loud.
//
// Who owns what: each loop claims its objects (reactor, fanout, router and
// the router's channel table) at the start of its thread; claim() is a
// hand-over, so the thread that built and configured an object gives it to
// the loop thread it starts. An object nobody claimed belongs to the first
// thread that uses it: unit tests build a Router on the test thread and use
// it there without ceremony, and a second thread touching it still aborts.
//
// A failed check aborts with a message naming the object and both threads.
// Release builds (NDEBUG) compile all of it out: the class is empty and
// check() is an empty inline function.
#pragma once
#ifndef NDEBUG
#include <atomic>
#include <cstdint>
#include <thread>
#endif

namespace tw {

class OwnerThread {
 public:
#ifdef NDEBUG
  void claim() {}
  void check(const char*) const {}
#else
  // Makes the calling thread the owner, whoever owned the object before.
  void claim();
  // Aborts unless the calling thread owns the object (or, unclaimed, takes it).
  // `what` names the object in the message: "Router", "Fanout".
  void check(const char* what) const {
    if (owner_.load(std::memory_order_acquire) != std::this_thread::get_id()) check_slow(what);
  }

 private:
  void check_slow(const char* what) const;
  void remember_owner_name() const;

  // Atomic because a foreign thread reads them: that read is what detects it.
  mutable std::atomic<std::thread::id> owner_{};
  mutable std::atomic<uint64_t> owner_name_[2]{};  // the owner's thread name, for the message
#endif
};

}  // namespace tw
