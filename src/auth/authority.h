// Authority: the broker's current Policy, the verifier thread that checks
// passwords, and reloads. One per broker, shared by every loop thread.
//
// Threads: loops call authenticate() (per connection, never per message) and
// poll the Login it returns on their tick; the verifier thread runs the
// argon2id verifications at nice +10, so a loop woken by market data
// preempts it, and holds each failed answer back by failure_delay_ms (a
// password guesser gets one answer per delay per connection). It also does
// reloads, asked for by request_reload() (safe from a signal handler). The
// policy is swapped whole under a mutex; generation() tells loops to
// re-entitle their sessions.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "auth/policy.h"
#include "auth/usage.h"

namespace tw::auth {

// One login attempt. The verifier fills it and then sets done (release).
struct Login {
  std::atomic<bool> done{false};
  bool reloaded = false;                 // reload_for(): the users file was read and is in force
  std::shared_ptr<const Grants> grants;  // null: refused
  const char* error = "";                // why refused, for the client: never says which part was wrong
};

// The CN of an RFC 2253 subject ("CN=alice,O=Example" -> "alice"); "" if none.
std::string_view common_name(std::string_view subject);

class Authority {
 public:
  struct Settings {
    std::string path;                  // the users file (reloads read it again)
    bool allow_anonymous = false;      // connections without credentials get the [anonymous] rules
    uint32_t failure_delay_ms = 1'000;
    size_t max_pending = 1'024;        // logins waiting for the verifier; more are refused at once
    std::string usage_log;             // "" = no usage accounting
    uint32_t usage_interval_ms = 60'000;
  };
  Authority(Settings settings, std::shared_ptr<const Policy> policy);
  ~Authority();  // stop()
  Authority(const Authority&) = delete;
  Authority& operator=(const Authority&) = delete;

  void start();
  void stop();

  std::shared_ptr<const Policy> policy() const;
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  bool allow_anonymous() const { return settings_.allow_anonymous; }

  // Any thread: queues a password check; poll the Login's done flag.
  std::shared_ptr<Login> authenticate(std::string_view user, std::string_view password);
  // The grants of the user a TLS client certificate maps to (null: none).
  // `names` as Transport::peer_names gives them: the subject, then the
  // subjectAltNames; the subject, then its CN, then each SAN in the
  // certificate's order is looked up, and the first that names a user wins.
  std::shared_ptr<const Grants> for_certificate(const std::vector<std::string>& names) const;
  // The grants of anonymous connections (null when they are refused).
  std::shared_ptr<const Grants> for_anonymous() const;
  // The same user's grants under the current policy (after a reload); null: the user is gone.
  std::shared_ptr<const Grants> refresh(const Grants& old) const;

  // Safe from a signal handler: the verifier thread reloads the users file soon.
  void request_reload() { reload_requested_.store(true, std::memory_order_relaxed); }
  // An admin's reload request: the verifier thread reloads and fills the
  // answer (reloaded, or error); poll its done flag like a login.
  std::shared_ptr<Login> reload_for();
  // Reloads now (the verifier thread, or tests); a bad file keeps the current policy.
  Status reload();

  uint64_t failures() const { return failures_.load(std::memory_order_relaxed); }

  bool accounts_usage() const { return !settings_.usage_log.empty(); }
  // Any thread (a loop, once per tick): usage since its last report, per user ("" = anonymous).
  void add_usage(const std::vector<std::pair<std::string, Usage>>& deltas);
  // Any thread: each user's usage since the broker started ("" = anonymous), for /metrics.
  std::map<std::string, Usage> usage_totals() const;
  // Appends one line per user with usage since the last write; the verifier
  // thread calls it once per usage_interval_ms, stop() once more.
  void write_usage();

 private:
  struct Job {
    std::shared_ptr<Login> login;
    std::string user;
    std::string password;
    bool reload = false;  // an admin's reload request, not a login
  };
  struct Held {
    uint64_t release_ns = 0;
    std::shared_ptr<Login> login;
  };
  void run();
  void verify(Job& job);
  void release_due(uint64_t now_ns);
  void note_failure(const std::string& user);

  const Settings settings_;
  mutable std::mutex policy_mutex_;  // per connection and per reload, never per message
  std::shared_ptr<const Policy> policy_;
  std::atomic<uint64_t> generation_{1};
  std::atomic<bool> reload_requested_{false};
  std::atomic<uint64_t> failures_{0};

  std::mutex jobs_mutex_;
  std::condition_variable jobs_cv_;
  std::deque<Job> jobs_;
  bool stop_ = false;
  std::vector<Held> held_;  // the verifier thread's only
  mutable std::mutex usage_mutex_;  // once per loop tick and per scrape, never per message
  std::map<std::string, Usage> usage_;         // since the last usage log line
  std::map<std::string, Usage> usage_totals_;  // since the start
  uint64_t next_usage_write_ns_ = 0;
  uint64_t log_window_ns_ = 0;
  uint32_t logged_in_window_ = 0;
  uint64_t suppressed_ = 0;
  std::thread thread_;
};

}  // namespace tw::auth
