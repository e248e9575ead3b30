// TickSchedule: every session of one loop and when its tick next has work
// (0: at the next tick). The loop's tick scans the times, one word each, and
// visits only the sessions due: an idle connection costs a comparison per
// tick. A session holds its place as an Entry, which follows it when another
// session leaves (the last one takes the free place). Owned by the loop thread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tw::session {

class Session;

// Of any owner type, so that it can be tested alone; the loop's is TickSchedule.
template <typename Owner>
class TickScheduleOf {
 public:
  class Entry {
   public:
    Entry(TickScheduleOf& schedule, Owner& owner) : schedule_(schedule), owner_(owner) {
      slot_ = schedule_.entries_.size();
      schedule_.entries_.push_back(this);
      schedule_.due_ns_.push_back(0);
    }
    ~Entry() {
      Entry* last = schedule_.entries_.back();
      schedule_.entries_[slot_] = last;
      schedule_.due_ns_[slot_] = schedule_.due_ns_.back();
      last->slot_ = slot_;
      schedule_.entries_.pop_back();
      schedule_.due_ns_.pop_back();
    }
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;

    // Something happened: the next tick visits this session.
    void wake() { schedule_.due_ns_[slot_] = 0; }
    void set_due_ns(uint64_t due_ns) { schedule_.due_ns_[slot_] = due_ns; }
    uint64_t due_ns() const { return schedule_.due_ns_[slot_]; }

   private:
    friend class TickScheduleOf;
    TickScheduleOf& schedule_;
    Owner& owner_;
    size_t slot_;
  };

  // Calls visit(owner) for every one due at `now_ns`; a visit must neither
  // add nor remove entries (sessions are reaped at the turn's end).
  template <typename Visit>
  void visit_due(uint64_t now_ns, Visit&& visit) {
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (due_ns_[i] <= now_ns) visit(entries_[i]->owner_);
    }
  }
  size_t size() const { return entries_.size(); }

 private:
  std::vector<Entry*> entries_;
  std::vector<uint64_t> due_ns_;  // beside the entries: the scan reads one word per session
};

using TickSchedule = TickScheduleOf<Session>;

}  // namespace tw::session
