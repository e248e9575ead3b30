// Seqlock<T>: one writer thread publishes a small plain struct; any thread
// reads a consistent copy of the latest one. Used for the loops' counter
// snapshots (tier/loop_snapshot.h): the loop publishes on its tick, the
// shutdown summary (and later an admin listener) reads.
//
// Why a seqlock: the writer is a loop thread that must never wait for a
// reader (a mutex would let a reader stall it), and the fields must be read
// as one set (an array of independent atomics would let a reader mix two
// publications, e.g. frames_in from one tick and bytes_in from the next).
// A reader that overlaps a publication retries; publications are rare
// (every tick), so it almost never does.
//
// Why it is race-free: every word is a std::atomic, stored with release and
// loaded with acquire, so there are no plain concurrent accesses and no
// fences (which ThreadSanitizer does not model). A reader that loads any
// word of publication k therefore also sees k's odd sequence number, and
// retries.
#pragma once
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <thread>
#include <type_traits>

namespace tw {

template <typename T>
class Seqlock {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % sizeof(uint64_t) == 0, "published as whole words");
  static constexpr size_t kWords = sizeof(T) / sizeof(uint64_t);
  using Words = std::array<uint64_t, kWords>;

 public:
  // Only one thread may publish (the loop that owns the values).
  void publish(const T& value) {
    const Words words = std::bit_cast<Words>(value);
    const uint64_t seq = seq_.load(std::memory_order_relaxed);
    seq_.store(seq + 1, std::memory_order_relaxed);  // odd: a publication is under way
    for (size_t i = 0; i < kWords; ++i) words_[i].store(words[i], std::memory_order_release);
    seq_.store(seq + 2, std::memory_order_release);
  }

  // Any thread: the latest publication, whole (T{} before the first).
  T read() const {
    Words words{};
    for (;;) {
      const uint64_t before = seq_.load(std::memory_order_acquire);
      if (before % 2 == 0) {
        for (size_t i = 0; i < kWords; ++i) words[i] = words_[i].load(std::memory_order_acquire);
        if (seq_.load(std::memory_order_relaxed) == before) break;
      }
      std::this_thread::yield();  // the writer is mid-publication
    }
    return std::bit_cast<T>(words);
  }

 private:
  std::atomic<uint64_t> seq_{0};
  std::array<std::atomic<uint64_t>, kWords> words_{};
};

}  // namespace tw
