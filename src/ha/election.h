// The primary/backup election of an HA pair, on a thread of its own: grant a
// lease, campaign for the leader key under it, renew it every third of its
// TTL, campaign again whenever the key is free. Whoever holds the key is
// primary for that term, and the key's create revision is the term's epoch.
//
// Fencing by time: a primary stops acting as one (may_act_as_primary()
// turns false) when its lease could have expired in etcd by its own clock,
// that is, the send time of its last renewal that also found the key still
// its own, plus the TTL etcd returned, less a margin; never later. So a
// primary that is paused or cut off from etcd stops acknowledging before a
// backup can be elected. A new primary whose predecessor's lease may still
// run (its key was deleted, not expired) waits one TTL before it acts.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "ha/etcd.h"

namespace tw::ha {

struct ElectionOptions {
  std::string key = "tickwire/ha/leader";
  std::string name;  // this broker's name: the key's value while it leads
  int64_t ttl_s = 2;
  // Taken off the lease's end: renewal round trips and clock rate drift.
  std::chrono::milliseconds margin{250};
  // How often a backup tries for the key (and how soon it sees it free).
  std::chrono::milliseconds backup_poll{250};
};

struct Role {
  bool primary = false;
  int64_t epoch = 0;   // the current term's epoch (0: nobody leads, or not known)
  std::string leader;  // the leader's name ("" when not known)
  bool operator==(const Role&) const = default;
};

class Election {
 public:
  using OnChange = std::function<void(const Role&)>;  // called on the election thread

  Election(EtcdOptions etcd, ElectionOptions options, OnChange on_change);
  ~Election();
  Election(const Election&) = delete;
  Election& operator=(const Election&) = delete;

  void start();
  // Stops the thread; a primary resigns first (deletes its key, revokes its
  // lease) so that the backup need not wait out the TTL.
  void stop();

  // The role; not primary once the term's time fence has passed (below).
  Role role() const;
  bool may_act_as_primary() const;

 private:
  void run();
  // One round: renew or obtain the lease, then campaign or check the term.
  // Returns when to run the next one.
  std::chrono::steady_clock::time_point round();
  bool obtain_lease();
  void renew();
  void extend(int64_t sent_ns, int64_t ttl_s);
  void campaign();
  int64_t grace_ns();
  bool confirm_term();
  void demote(const char* why);
  void learn_leader();
  int64_t term_epoch() const;  // role_'s, whatever the clock says
  void set_role(Role role);
  std::chrono::steady_clock::duration renewal_interval() const;

  Etcd etcd_;
  const ElectionOptions options_;
  const OnChange on_change_;

  int64_t lease_ = 0;  // election thread only
  int64_t previous_lease_ = 0;  // the last holder's lease this broker saw (election thread only)
  std::chrono::steady_clock::time_point hold_off_until_{};  // election thread only
  std::atomic<bool> primary_{false};
  std::atomic<int64_t> deadline_ns_{0};     // monotonic_ns(): see may_act_as_primary()
  std::atomic<int64_t> acting_from_ns_{0};  // a new term's grace (grace_ns())
  mutable std::mutex mutex_;             // role_ and stopping_
  Role role_;
  bool stopping_ = false;
  std::condition_variable wake_;
  std::thread thread_;
};

}  // namespace tw::ha
