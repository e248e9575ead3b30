// Debug-build check that an object is used only by the thread that owns it.
// State in Tickwire has one owner thread; this makes a violation loud.
#pragma once
#include <cassert>
#include <thread>

namespace tw {

class OwnerThread {
 public:
  void claim() { owner_ = std::this_thread::get_id(); }
  void check() const {
#ifndef NDEBUG
    assert(owner_ == std::thread::id{} || owner_ == std::this_thread::get_id());
#endif
  }

 private:
  std::thread::id owner_{};
};

}  // namespace tw
