#include "auth/authority.h"

#include <arpa/inet.h>
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
constexpr const char* kSourceBusy = "too many login attempts from this address, try again later";
constexpr const char* kAllBusy = "too many logins in progress, try again later";

// Verified when the user does not exist, so an unknown name costs what a
// known one does and timing tells nothing: a hash made once per cost, with
// the cost of the first user's hash. Shared by the verifiers.
const std::string& dummy_hash(const Policy& policy) {
  static std::mutex mutex;
  static std::map<std::string, std::string> by_cost;
  std::lock_guard lock(mutex);
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
  const uint32_t cores = std::max(1u, std::thread::hardware_concurrency());
  const uint32_t count = std::clamp(settings_.verifier_threads, 1u, cores);
  for (uint32_t i = 0; i < count; ++i) verifiers_.emplace_back([this] { run_verifier(); });
  housekeeper_ = std::thread([this] { housekeep(); });
}

void Authority::stop() {
  {
    std::lock_guard lock(jobs_mutex_);
    stop_ = true;
  }
  jobs_cv_.notify_all();
  house_cv_.notify_all();
  for (std::thread& t : verifiers_) {
    if (t.joinable()) t.join();
  }
  if (housekeeper_.joinable()) housekeeper_.join();
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

std::shared_ptr<Login> Authority::authenticate(std::string_view user, std::string_view password,
                                               std::string_view source) {
  auto login = std::make_shared<Login>();
  std::string key = source_key(source);
  {
    std::lock_guard lock(jobs_mutex_);
    auto it = sources_.find(key);
    const size_t in_progress = it == sources_.end() ? 0 : it->second.in_progress;
    if (in_progress < settings_.max_pending_per_source && queued_ < settings_.max_pending) {
      if (it == sources_.end()) it = sources_.try_emplace(key).first;
      if (it->second.queued.empty()) turns_.push_back(key);
      it->second.queued.push_back({login, std::string(user), std::string(password), std::move(key)});
      ++it->second.in_progress;
      ++queued_;
      jobs_cv_.notify_one();
      return login;
    }
    login->error = in_progress >= settings_.max_pending_per_source ? kSourceBusy : kAllBusy;
  }
  failures_.fetch_add(1, std::memory_order_relaxed);
  if (login->error == kSourceBusy) {
    source_refusals_.fetch_add(1, std::memory_order_relaxed);
    note_source_refusal(key);
  }
  login->busy = true;
  login->done.store(true, std::memory_order_release);
  return login;
}

std::shared_ptr<Login> Authority::reload_for() {
  auto answer = std::make_shared<Login>();
  {
    std::lock_guard lock(jobs_mutex_);
    reloads_.push_back(answer);
  }
  house_cv_.notify_one();
  return answer;
}

std::shared_ptr<const Grants> Authority::for_certificate(const CertificateNames& names) const {
  using Kind = CertificateName::Kind;
  if (names.empty()) return nullptr;
  auto p = policy();
  const User* u = p->find_by_certificate({Kind::Subject, names.subject});
  if (u == nullptr) u = p->find_by_certificate({Kind::Subject, std::string(common_name(names.subject))});
  for (const CertificateName& alt : names.alt_names) {
    if (u != nullptr) break;
    if (alt.kind != Kind::Subject) u = p->find_by_certificate(alt);  // a SAN never stands for a subject
  }
  return u ? u->grants : nullptr;
}

std::string_view address_of(std::string_view peer) {
  const size_t colon = peer.rfind(':');
  std::string_view host = colon == std::string_view::npos ? peer : peer.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return host;
}

std::string source_key(std::string_view address) {
  in6_addr a6{};
  const std::string text(address);
  if (inet_pton(AF_INET6, text.c_str(), &a6) != 1) return text;
  char buf[INET6_ADDRSTRLEN] = {};
  if (IN6_IS_ADDR_V4MAPPED(&a6)) return inet_ntop(AF_INET, &a6.s6_addr[12], buf, sizeof buf) ? buf : text;
  std::fill(std::begin(a6.s6_addr) + 8, std::end(a6.s6_addr), uint8_t{0});
  return inet_ntop(AF_INET6, &a6, buf, sizeof buf) ? std::string(buf) + "/64" : text;
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

// Reloads, held answers and usage lines: whatever is not a password check.
void Authority::housekeep() {
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 10);  // loops preempt it
  std::unique_lock lock(jobs_mutex_);
  while (!stop_) {
    if (!reloads_.empty() || reload_requested_.exchange(false, std::memory_order_relaxed)) {
      std::shared_ptr<Login> answer;
      if (!reloads_.empty()) {
        answer = std::move(reloads_.front());
        reloads_.pop_front();
      }
      lock.unlock();
      const bool reloaded = reload().ok();
      if (answer) {
        answer->reloaded = reloaded;
        if (!reloaded) answer->error = "the users file has errors (the broker's log says which); the rules in force stay";
        answer->done.store(true, std::memory_order_release);
      }
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
    // Often enough for held answers and signalled reloads; at once for an admin's.
    house_cv_.wait_for(lock, std::chrono::milliseconds(20), [&] { return stop_ || !reloads_.empty(); });
  }
  lock.unlock();
  release_due(UINT64_MAX);
}

void Authority::run_verifier() {
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 10);  // loops preempt it
  std::unique_lock lock(jobs_mutex_);
  for (;;) {
    jobs_cv_.wait(lock, [&] { return stop_ || !turns_.empty(); });
    if (stop_) return;
    Job job = next_job();
    lock.unlock();
    verify(job);
    lock.lock();
    auto it = sources_.find(job.source);
    if (--it->second.in_progress == 0) sources_.erase(it);
  }
}

// Round-robin across sources: the first source's oldest login; the source
// goes to the back of the turns while it has more queued.
Authority::Job Authority::next_job() {
  std::string source = std::move(turns_.front());
  turns_.pop_front();
  Source& s = sources_.find(source)->second;
  Job job = std::move(s.queued.front());
  s.queued.pop_front();
  --queued_;
  job.login->turn = ++turns_taken_;
  if (!s.queued.empty()) turns_.push_back(std::move(source));
  return job;
}

void Authority::verify(Job& job) {
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
  hold(std::move(job.login));
}

// The failed answer waits out failure_delay_ms in held_, which the
// housekeeper releases: the verifier goes on to the next login at once.
void Authority::hold(std::shared_ptr<Login> login) {
  if (settings_.failure_delay_ms == 0) return login->done.store(true, std::memory_order_release);
  std::lock_guard lock(held_mutex_);
  held_.push_back({monotonic_ns() + settings_.failure_delay_ms * kMs, std::move(login)});
}

void Authority::release_due(uint64_t now_ns) {
  std::lock_guard lock(held_mutex_);
  auto due = [&](const Held& h) { return h.release_ns <= now_ns; };
  for (Held& h : held_) {
    if (due(h)) h.login->done.store(true, std::memory_order_release);
  }
  held_.erase(std::remove_if(held_.begin(), held_.end(), due), held_.end());
}

// At most a few lines a second: a password guesser must not fill the log.
bool Authority::may_log() {
  std::lock_guard lock(log_mutex_);
  const uint64_t now = monotonic_ns();
  if (now - log_window_ns_ >= 1'000 * kMs) {
    if (suppressed_ > 0) TW_WARN("%llu more failed logins not logged", static_cast<unsigned long long>(suppressed_));
    log_window_ns_ = now;
    logged_in_window_ = 0;
    suppressed_ = 0;
  }
  if (logged_in_window_ >= kLogLinesPerSecond) {
    ++suppressed_;
    return false;
  }
  ++logged_in_window_;
  return true;
}

// Rate-limited apart from the failures, so that refusals (which come faster)
// never crowd the failed logins out of the log.
void Authority::note_source_refusal(const std::string& source) {
  uint64_t suppressed = 0;
  {
    std::lock_guard lock(log_mutex_);
    if (!refusal_log_.allow(monotonic_ns(), suppressed)) return;
  }
  TW_WARN("login from %s refused unchecked: %zu logins from there in progress already "
          "(auth_max_pending_per_source; %llu such refusals not logged before this one)",
          source.c_str(), settings_.max_pending_per_source, static_cast<unsigned long long>(suppressed));
}

void Authority::note_failure(const std::string& user) {
  if (!may_log()) return;
  // The user name only, printable bytes only; never the password.
  std::string shown = user.substr(0, 64);
  for (char& c : shown) {
    if (c < 0x20 || c == 0x7f) c = '?';
  }
  TW_WARN("failed login for user '%s'", shown.c_str());
}

}  // namespace tw::auth
