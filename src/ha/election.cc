#include "ha/election.h"

#include <algorithm>

#include "base/clock.h"
#include "base/log.h"

namespace tw::ha {
namespace {

using Clock = std::chrono::steady_clock;

EtcdOptions with_timeout(EtcdOptions etcd, const ElectionOptions& options) {
  // A call must not outlast a renewal interval, or one slow answer would
  // carry a primary past the end of its lease before it learns of it.
  const auto third = std::chrono::milliseconds(options.ttl_s * 1000 / 3);
  etcd.timeout = std::min(etcd.timeout, std::max(third, std::chrono::milliseconds(100)));
  return etcd;
}

int64_t seconds_ns(int64_t s) { return s * 1'000'000'000; }

}  // namespace

Election::Election(EtcdOptions etcd, ElectionOptions options, OnChange on_change)
    : etcd_(with_timeout(std::move(etcd), options)), options_(std::move(options)), on_change_(std::move(on_change)) {}

Election::~Election() { stop(); }

void Election::start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
}

void Election::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// Past its lease's end by its own clock a primary is one no longer, even
// while its thread still waits on the call that would tell it so.
Role Election::role() const {
  std::lock_guard lock(mutex_);
  if (role_.primary && static_cast<int64_t>(monotonic_ns()) >= deadline_ns_.load(std::memory_order_acquire)) {
    return Role{};
  }
  return role_;
}

int64_t Election::term_epoch() const {
  std::lock_guard lock(mutex_);
  return role_.epoch;
}

bool Election::may_act_as_primary() const {
  const int64_t now = static_cast<int64_t>(monotonic_ns());
  return primary_.load(std::memory_order_acquire) && now >= acting_from_ns_.load(std::memory_order_acquire) &&
         now < deadline_ns_.load(std::memory_order_acquire);
}

void Election::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    const Clock::time_point next = round();
    lock.lock();
    wake_.wait_until(lock, next, [this] { return stopping_; });
  }
  lock.unlock();
  const bool was_primary = primary_.exchange(false);  // no acknowledgement after this point
  // Revoking the lease deletes the key with it, so the backup finds the
  // previous term's lease gone and acts at once (see campaign()).
  if (lease_ != 0) (void)etcd_.revoke(lease_);
  if (was_primary) {
    TW_INFO("ha: %s resigned the term of epoch %lld", options_.name.c_str(), static_cast<long long>(term_epoch()));
    set_role(Role{});
  }
}

Clock::time_point Election::round() {
  if (lease_ != 0) renew();
  if (lease_ == 0 && !obtain_lease()) return Clock::now() + options_.backup_poll;
  if (!primary_.load()) {
    if (Clock::now() >= hold_off_until_) {
      campaign();
    } else {
      learn_leader();  // held off after its term ended: still says who leads
    }
  }
  if (!primary_.load()) return Clock::now() + options_.backup_poll;
  // Wake for the next renewal, or at the lease's end if that comes first (a
  // renewal that keeps failing), to demote on time.
  const auto deadline = Clock::time_point(std::chrono::nanoseconds(deadline_ns_.load()));
  return std::min(Clock::now() + renewal_interval(), deadline);
}

bool Election::obtain_lease() {
  const int64_t sent = static_cast<int64_t>(monotonic_ns());
  auto lease = etcd_.grant(options_.ttl_s);
  if (!lease) {
    TW_WARN("ha: %s", lease.error().message.c_str());
    if (primary_.load() && !may_act_as_primary()) demote("etcd unreachable past the lease's end");
    return false;
  }
  lease_ = lease->id;
  extend(sent, lease->ttl_s);
  return true;
}

// A primary's lease deadline moves on only when the renewal succeeded AND
// the key still holds its epoch, both asked after `sent`: so it never acts
// longer than a TTL after the key stopped being its own, whatever ended it
// (the lease, or an operator deleting the key).
void Election::renew() {
  const int64_t sent = static_cast<int64_t>(monotonic_ns());
  // Woken at the lease's end (the renewals went unanswered): the term may be
  // over already; step down now, not after this call's timeout.
  if (primary_.load() && sent >= deadline_ns_.load()) demote("no renewal answered before the lease's end");
  auto ttl = etcd_.keep_alive(lease_);
  if (ttl && *ttl > 0) {
    if (!primary_.load() || confirm_term()) extend(sent, *ttl);
    return;
  }
  if (ttl) {  // etcd forgot the lease: its keys are gone, the term is over
    lease_ = 0;
    if (primary_.load()) demote("the lease expired in etcd");
    return;
  }
  TW_WARN("ha: renewing the lease: %s", ttl.error().message.c_str());
  if (primary_.load() && !may_act_as_primary()) demote("etcd unreachable past the lease's end");
}

void Election::extend(int64_t sent_ns, int64_t ttl_s) {
  deadline_ns_.store(sent_ns + seconds_ns(ttl_s) - std::chrono::nanoseconds(options_.margin).count(),
                     std::memory_order_release);
}

void Election::campaign() {
  auto result = etcd_.campaign(options_.key, options_.name, lease_);
  if (!result) {
    TW_WARN("ha: campaign: %s", result.error().message.c_str());
    return;
  }
  if (!result->won && result->leader.lease == lease_) {
    // The key is still ours (fenced by time, yet etcd never expired the
    // lease): nobody else was elected, so the same term goes on.
    primary_.store(true, std::memory_order_release);
    TW_INFO("ha: %s is primary again, epoch %lld", options_.name.c_str(), static_cast<long long>(result->leader.epoch));
    set_role(Role{true, result->leader.epoch, result->leader.value});
    return;
  }
  if (!result->won) {
    previous_lease_ = result->leader.lease;
    set_role(Role{false, result->leader.epoch, result->leader.value});
    return;
  }
  acting_from_ns_.store(static_cast<int64_t>(monotonic_ns()) + grace_ns(), std::memory_order_release);
  primary_.store(true, std::memory_order_release);
  TW_INFO("ha: %s is primary, epoch %lld", options_.name.c_str(), static_cast<long long>(result->leader.epoch));
  set_role(Role{true, result->leader.epoch, result->leader.value});
}

// How long a new primary waits before acting: none when the last holder it
// saw has lost its lease (it died, or resigned by revoking it: its deadline
// has passed); otherwise a TTL, the longest the last holder can go on by its
// own clock after its key was deleted under it (renew()).
int64_t Election::grace_ns() {
  if (previous_lease_ != 0) {
    auto left = etcd_.time_to_live(previous_lease_);
    if (left && *left < 0) return 0;
  }
  TW_INFO("ha: %s waits %llds before acting: the previous term's lease may still run", options_.name.c_str(),
          static_cast<long long>(options_.ttl_s));
  return seconds_ns(options_.ttl_s);
}

// A renewed lease keeps the key, unless an operator deleted it (a manual
// switch-over) or it was replaced: then this term is over.
bool Election::confirm_term() {
  auto holder = etcd_.leader(options_.key);
  if (!holder) return false;  // unknown: the lease's deadline decides
  if (*holder && (*holder)->epoch == term_epoch()) return true;
  demote("the leader key was deleted or replaced");
  return false;
}

// A deposed primary (paused by SIGSTOP or cut off past its lease's end, or
// its key deleted) reads who leads while it is held off: its broker then
// refuses clients naming the new primary at once, not after the hold-off.
void Election::learn_leader() {
  auto holder = etcd_.leader(options_.key);
  // Still its own key (etcd was out of reach, yet kept the lease): the
  // campaign after the hold-off takes the same term up again.
  if (!holder || !*holder || (*holder)->lease == lease_) return;
  previous_lease_ = (*holder)->lease;
  set_role(Role{false, (*holder)->epoch, (*holder)->value});
}

// A deposed primary lets the others campaign first for one TTL: after a
// manual switch-over (its key deleted) it would otherwise win the free key
// again at once with the lease it still holds.
void Election::demote(const char* why) {
  primary_.store(false, std::memory_order_release);
  hold_off_until_ = Clock::now() + std::chrono::seconds(options_.ttl_s);
  TW_WARN("ha: %s is no longer primary: %s", options_.name.c_str(), why);
  set_role(Role{});
}

void Election::set_role(Role role) {
  {
    std::lock_guard lock(mutex_);
    if (role == role_) return;
    role_ = role;
  }
  if (on_change_) on_change_(role);
}

Clock::duration Election::renewal_interval() const {
  return std::chrono::milliseconds(options_.ttl_s * 1000 / 3);
}

}  // namespace tw::ha
