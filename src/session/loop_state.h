// LoopState: what one loop's sessions share, owned by the loop (the access
// point) and reached through Session::Env.
//   - the read buffer: every session reads into it and keeps only a partial
//     frame left over after parsing, so an idle connection holds no input memory;
//   - the input budget: the bytes those partial frames hold (input_budget.h);
//   - the sessions the loop must act on at the end of a turn, so that the
//     turn's end visits only connections that did something, never all:
//     the ones that began closing, and the ones producing a paced reply (a
//     listing written as the connection's output drains).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "session/input_budget.h"
#include "session/tick_schedule.h"

namespace tw::session {

class Session;

struct LoopState {
  static constexpr size_t kReadBufferBytes = 64 * 1024;

  explicit LoopState(size_t input_budget_bytes) : input(input_budget_bytes), read_buffer(kReadBufferBytes) {}

  InputBudget input;
  std::vector<uint8_t> read_buffer;
  std::vector<Session*> closing;  // marked closing since the loop last reaped
  std::vector<Session*> paced;    // producing a reply as their output drains
  std::vector<Session*> pacing;   // Session::pace_all's working copy of `paced`
  // Sessions whose input waits at a PublishFence (publish_fence.h): another
  // thread clears it without waking this loop, so the loop polls meanwhile.
  uint32_t fenced = 0;
  // Every session, and when its tick next has work.
  TickSchedule ticks;
};

}  // namespace tw::session
