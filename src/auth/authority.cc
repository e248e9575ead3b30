#include "auth/authority.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <cstring>
#include <map>

#include "auth/password.h"
#include "base/clock.h"
#include "base/log.h"

namespace tw::auth {

namespace {
constexpr uint64_t kMs = 1'000'000;
constexpr uint32_t kLogLinesPerSecond = 5;
constexpr const char* kRefused = "unknown user or wrong password";

// Verified when the user does not exist, so an unknown name costs what a
// known one does and timing tells nothing: a hash made once per cost, with
// the cost of the first user's hash. The verifier thread's only.
const std::string& dummy_hash(const Policy& policy) {
  static std::map<std::string, std::string> by_cost;
  std::string params = policy.sample_hash_params();
  HashCost cost;
  if (std::sscanf(params.c_str(), "m=%u,t=%u,p=%u", &cost.memory_kib, &cost.time, &cost.lanes) != 3) cost = {};
  auto [it, added] = by_cost.try_emplace(params);
  if (added) {
    auto h = hash_password("tickwire-no-such-user", cost);
    it->second = h ? *h : std::string();
  }
  return it->second;
}
}  // namespace

Authority::Authority(Settings settings, std::shared_ptr<const Policy> policy)
    : settings_(std::move(settings)), policy_(std::move(policy)) {}

Authority::~Authority() { stop(); }

void Authority::start() {
  thread_ = std::thread([this] { run(); });
}

void Authority::stop() {
  {
    std::lock_guard lock(jobs_mutex_);
    stop_ = true;
  }
  jobs_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  write_usage();
}

void Authority::add_usage(const std::vector<std::pair<std::string, Usage>>& deltas) {
  std::lock_guard lock(usage_mutex_);
  for (const auto& [user, delta] : deltas) {
    usage_[user].add(delta);
    usage_totals_[user].add(delta);
  }
}

std::map<std::string, Usage> Authority::usage_totals() const {
  std::lock_guard lock(usage_mutex_);
  return usage_totals_;
}

// One line per user: "TIME user=NAME logins=N subscriptions=N channels=N messages=N bytes=N".
void Authority::write_usage() {
  if (settings_.usage_log.empty()) return;
  std::map<std::string, Usage> taken;
  {
    std::lock_guard lock(usage_mutex_);
    taken.swap(usage_);
  }
  if (taken.empty()) return;
  FILE* out = std::fopen(settings_.usage_log.c_str(), "a");
  if (out == nullptr) {
    TW_WARN("cannot append to the usage log %s: %s", settings_.usage_log.c_str(), std::strerror(errno));
    return;
  }
  char stamp[32];
  const time_t now = time(nullptr);
  tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  for (const auto& [user, u] : taken) {
    std::fprintf(out, "%s user=%s logins=%llu subscriptions=%llu channels=%llu messages=%llu bytes=%llu\n", stamp,
                 user.empty() ? "(anonymous)" : user.c_str(), static_cast<unsigned long long>(u.logins),
                 static_cast<unsigned long long>(u.subscriptions), static_cast<unsigned long long>(u.channels),
                 static_cast<unsigned long long>(u.messages), static_cast<unsigned long long>(u.bytes));
  }
  std::fclose(out);
}

std::shared_ptr<const Policy> Authority::policy() const {
  std::lock_guard lock(policy_mutex_);
  return policy_;
}

std::shared_ptr<Login> Authority::authenticate(std::string_view user, std::string_view password) {
  auto login = std::make_shared<Login>();
  {
    std::lock_guard lock(jobs_mutex_);
    if (jobs_.size() < settings_.max_pending) {
      jobs_.push_back({login, std::string(user), std::string(password)});
      jobs_cv_.notify_one();
      return login;
    }
  }
  failures_.fetch_add(1, std::memory_order_relaxed);
  login->error = "too many logins in progress, try again later";
  login->done.store(true, std::memory_order_release);
  return login;
}

std::shared_ptr<Login> Authority::reload_for() {
  auto answer = std::make_shared<Login>();
  {
    std::lock_guard lock(jobs_mutex_);
    jobs_.push_back({answer, {}, {}, true});
  }
  jobs_cv_.notify_one();
  return answer;
}

std::shared_ptr<const Grants> Authority::for_certificate(const std::vector<std::string>& names) const {
  if (names.empty()) return nullptr;
  auto p = policy();
  const User* u = p->find_by_certificate(names.front());
  if (u == nullptr) u = p->find_by_certificate(common_name(names.front()));
  for (size_t i = 1; u == nullptr && i < names.size(); ++i) u = p->find_by_certificate(names[i]);
  return u ? u->grants : nullptr;
}

// "CN=alice,O=Example" (RFC 2253, as TlsTransport::peer_identity gives it) -> "alice".
std::string_view common_name(std::string_view subject) {
  for (size_t at = 0; at < subject.size();) {
    size_t end = at;
    while (end < subject.size() && subject[end] != ',') end += subject[end] == '\\' ? 2 : 1;
    end = std::min(end, subject.size());
    std::string_view part = subject.substr(at, end - at);
    if (part.rfind("CN=", 0) == 0) return part.substr(3);
    at = end + 1;
  }
  return {};
}

std::shared_ptr<const Grants> Authority::for_anonymous() const {
  return settings_.allow_anonymous ? policy()->anonymous() : nullptr;
}

std::shared_ptr<const Grants> Authority::refresh(const Grants& old) const {
  auto p = policy();
  if (old.user().empty()) return settings_.allow_anonymous ? p->anonymous() : nullptr;
  const User* u = p->find_user(old.user());
  return u ? u->grants : nullptr;
}

Status Authority::reload() {
  auto loaded = Policy::load(settings_.path);
  if (!loaded) {
    TW_WARN("users file reload failed, keeping the current rules: %s", loaded.error().message.c_str());
    return loaded.error();
  }
  {
    std::lock_guard lock(policy_mutex_);
    policy_ = *loaded;
  }
  generation_.fetch_add(1, std::memory_order_acq_rel);
  TW_INFO("reloaded %s: %zu users, %zu rule patterns", settings_.path.c_str(), (*loaded)->user_count(),
          (*loaded)->rule_count());
  return Ok{};
}

void Authority::run() {
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 10);  // loops preempt it
  std::unique_lock lock(jobs_mutex_);
  while (!stop_) {
    if (reload_requested_.exchange(false, std::memory_order_relaxed)) {
      lock.unlock();
      (void)reload();
      lock.lock();
      continue;
    }
    if (!jobs_.empty()) {
      Job job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      verify(job);
      lock.lock();
      continue;
    }
    lock.unlock();
    const uint64_t now = monotonic_ns();
    release_due(now);
    if (now >= next_usage_write_ns_) {
      if (next_usage_write_ns_ != 0) write_usage();
      next_usage_write_ns_ = now + settings_.usage_interval_ms * kMs;
    }
    lock.lock();
    // Wakes for jobs at once, and often enough for held answers and reload requests.
    jobs_cv_.wait_for(lock, std::chrono::milliseconds(20), [&] { return stop_ || !jobs_.empty(); });
  }
  lock.unlock();
  release_due(UINT64_MAX);
}

void Authority::verify(Job& job) {
  if (job.reload) {
    job.login->reloaded = reload().ok();
    if (!job.login->reloaded) job.login->error = "the users file has errors (the broker's log says which); the rules in force stay";
    job.login->done.store(true, std::memory_order_release);
    return;
  }
  auto p = policy();
  const User* u = p->find_user(job.user);
  const bool known = u != nullptr && !u->password_hash.empty();
  const bool ok = verify_password(known ? u->password_hash : dummy_hash(*p), job.password) && known;
  explicit_bzero(job.password.data(), job.password.size());
  if (ok) {
    job.login->grants = u->grants;
    job.login->done.store(true, std::memory_order_release);
    return;
  }
  failures_.fetch_add(1, std::memory_order_relaxed);
  note_failure(job.user);
  job.login->error = kRefused;
  held_.push_back({monotonic_ns() + settings_.failure_delay_ms * kMs, std::move(job.login)});
  release_due(monotonic_ns());
}

void Authority::release_due(uint64_t now_ns) {
  auto due = [&](const Held& h) { return h.release_ns <= now_ns; };
  for (Held& h : held_) {
    if (due(h)) h.login->done.store(true, std::memory_order_release);
  }
  held_.erase(std::remove_if(held_.begin(), held_.end(), due), held_.end());
}

// At most a few lines a second: a password guesser must not fill the log.
void Authority::note_failure(const std::string& user) {
  const uint64_t now = monotonic_ns();
  if (now - log_window_ns_ >= 1'000 * kMs) {
    if (suppressed_ > 0) TW_WARN("%llu more failed logins not logged", static_cast<unsigned long long>(suppressed_));
    log_window_ns_ = now;
    logged_in_window_ = 0;
    suppressed_ = 0;
  }
  if (logged_in_window_ >= kLogLinesPerSecond) {
    ++suppressed_;
    return;
  }
  ++logged_in_window_;
  // The user name only, printable bytes only; never the password.
  std::string shown = user.substr(0, 64);
  for (char& c : shown) {
    if (c < 0x20 || c == 0x7f) c = '?';
  }
  TW_WARN("failed login for user '%s'", shown.c_str());
}

}  // namespace tw::auth
