// ask: runs a function on a loop thread (at its next tick, tier/loop_inbox.h)
// and waits a bounded time for its answer, on the admin side's thread (the
// HTTP listener's). A loop that does not answer in time (stopped, or stuck in
// a long turn) gives nullopt; its answer, if it comes later, is dropped.
#pragma once
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <vector>

#include "tier/loop_inbox.h"

namespace tw::admin {

// How long an HTTP request waits for a loop: several ticks (50 ms each).
inline constexpr std::chrono::milliseconds kLoopAnswerTimeout{1'000};

// Posts `fn` to every inbox first, then waits for all, so N loops cost one
// tick, not N; nullopt when any of them does not answer within `timeout`.
template <typename T>
std::optional<std::vector<T>> ask_all(const std::vector<tier::LoopInbox*>& inboxes, std::function<T(size_t)> fn,
                                      std::chrono::milliseconds timeout = kLoopAnswerTimeout) {
  std::vector<std::future<T>> answers;
  for (size_t i = 0; i < inboxes.size(); ++i) {
    auto promise = std::make_shared<std::promise<T>>();
    answers.push_back(promise->get_future());
    inboxes[i]->post([promise, fn, i] { promise->set_value(fn(i)); });
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<T> out;
  for (auto& answer : answers) {
    if (answer.wait_until(deadline) != std::future_status::ready) return std::nullopt;
    out.push_back(answer.get());
  }
  return out;
}

template <typename T>
std::optional<T> ask(tier::LoopInbox& inbox, std::function<T()> fn,
                     std::chrono::milliseconds timeout = kLoopAnswerTimeout) {
  auto all = ask_all<T>({&inbox}, [fn = std::move(fn)](size_t) { return fn(); }, timeout);
  if (!all) return std::nullopt;
  return std::move(all->front());
}

}  // namespace tw::admin
