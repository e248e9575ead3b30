// Authority: the broker's current Policy, the verifier threads that check
// passwords, and reloads. One per broker, shared by every loop thread.
//
// Threads: loops (and the HTTP thread) call authenticate() per connection,
// never per message, and poll the Login it returns. A small pool of
// verifier threads runs the argon2id verifications at nice +10, so a loop
// woken by market data preempts them. Logins queue per source address and
// the verifiers take them round-robin across addresses, so one address's
// backlog delays another address's login by about one verification per
// active address, not by the backlog; an address with max_pending_per_source
// logins in progress gets the next refused at once. A housekeeping thread
// (also nice +10) holds each failed answer back by failure_delay_ms (a
// password guesser gets one answer per delay per connection) without
// occupying a verifier, writes usage, and does reloads, asked for by
// request_reload() (safe from a signal handler) or reload_for(). The policy
// is swapped whole under a mutex; generation() tells loops to re-entitle
// their sessions.
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
#include "auth/user_counters.h"
#include "base/rate_limit.h"

namespace tw::auth {

// One login attempt. The verifier fills it and then sets done (release).
struct Login {
  std::atomic<bool> done{false};
  bool reloaded = false;                 // reload_for(): the users file was read and is in force
  std::shared_ptr<const Grants> grants;  // null: refused
  const char* error = "";                // why refused, for the client: never says which part was wrong
  bool busy = false;                     // refused unchecked: too many logins (from its address, or in all)
  uint64_t turn = 0;                     // 1, 2, ...: the order in which verifiers took logins up (0: never)
};

// The CN of an RFC 2253 subject ("CN=alice,O=Example" -> "alice"); "" if none.
std::string_view common_name(std::string_view subject);
// The address of a peer written "host:port" (io::accept_nonblocking), for authenticate().
std::string_view address_of(std::string_view peer);
// What logins are queued and bounded under: the address; for IPv6 its /64
// (one host commonly holds a whole /64), an IPv4-mapped address as IPv4.
std::string source_key(std::string_view address);

class Authority {
 public:
  struct Settings {
    std::string path;                  // the users file (reloads read it again)
    bool allow_anonymous = false;      // connections without credentials get the [anonymous] rules
    uint32_t failure_delay_ms = 1'000;
    size_t max_pending = 1'024;        // logins waiting for a verifier; more are refused at once
    std::string usage_log;             // "" = no usage accounting
    uint32_t usage_interval_ms = 60'000;
    uint32_t verifier_threads = 2;     // password checks at once (argon2id: each holds its memory cost)
    size_t max_pending_per_source = 4; // one source's logins waiting or being checked; more are refused at once
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

  // Any thread: queues a password check from `source` (the peer's IP
  // address, no port; address_of()); poll the Login's done flag. Refused at
  // once (busy) past max_pending_per_source or max_pending.
  std::shared_ptr<Login> authenticate(std::string_view user, std::string_view password, std::string_view source);
  // The grants of the user a TLS client certificate maps to (null: none).
  // `names` as Transport::peer_names gives them. The subject, then its CN,
  // are looked up among the users file's subject entries only, then each
  // subjectAltName in the certificate's order among the entries of its kind
  // only; the first that names a user wins.
  std::shared_ptr<const Grants> for_certificate(const CertificateNames& names) const;
  // The grants of anonymous connections (null when they are refused).
  std::shared_ptr<const Grants> for_anonymous() const;
  // The same user's grants under the current policy (after a reload); null: the user is gone.
  std::shared_ptr<const Grants> refresh(const Grants& old) const;

  // Safe from a signal handler: the housekeeping thread reloads the users file soon.
  void request_reload() { reload_requested_.store(true, std::memory_order_relaxed); }
  // An admin's reload request: the housekeeping thread reloads and fills the
  // answer (reloaded, or error); poll its done flag like a login.
  std::shared_ptr<Login> reload_for();
  // Reloads now (the housekeeping thread, or tests); a bad file keeps the current policy.
  Status reload();

  uint64_t failures() const { return failures_.load(std::memory_order_relaxed); }
  // Logins refused unchecked because their source had max_pending_per_source in progress.
  uint64_t source_refusals() const { return source_refusals_.load(std::memory_order_relaxed); }

  // Each user's new channels created by its open connections (session::ChannelQuota).
  UserCounters& channels_created() { return channels_created_; }

  bool accounts_usage() const { return !settings_.usage_log.empty(); }
  // Any thread (a loop, once per tick): usage since its last report, per user ("" = anonymous).
  void add_usage(const std::vector<std::pair<std::string, Usage>>& deltas);
  // Any thread: each user's usage since the broker started ("" = anonymous), for /metrics.
  std::map<std::string, Usage> usage_totals() const;
  // Appends one line per user with usage since the last write; the verifier
  // thread calls it once per usage_interval_ms, stop() once more.
  void write_usage();

 private:
  static constexpr uint32_t kRefusalLogBurst = 5;  // then one line a second
  struct Job {
    std::shared_ptr<Login> login;
    std::string user;
    std::string password;
    std::string source;  // source_key() of its address
  };
  // One source's logins: queued, and in progress (queued or being checked).
  struct Source {
    std::deque<Job> queued;
    size_t in_progress = 0;
  };
  struct Held {
    uint64_t release_ns = 0;
    std::shared_ptr<Login> login;
  };
  void housekeep();
  void run_verifier();
  Job next_job();  // jobs_mutex_ held; a source's turn goes to the back of turns_
  void verify(Job& job);
  void hold(std::shared_ptr<Login> login);
  void release_due(uint64_t now_ns);
  void note_failure(const std::string& user);
  void note_source_refusal(const std::string& source);
  bool may_log();

  const Settings settings_;
  mutable std::mutex policy_mutex_;  // per connection and per reload, never per message
  std::shared_ptr<const Policy> policy_;
  std::atomic<uint64_t> generation_{1};
  std::atomic<bool> reload_requested_{false};
  std::atomic<uint64_t> failures_{0};
  std::atomic<uint64_t> source_refusals_{0};

  std::mutex jobs_mutex_;              // per login, never per message
  std::condition_variable jobs_cv_;    // verifiers wait here
  std::condition_variable house_cv_;   // the housekeeper waits here
  std::map<std::string, Source, std::less<>> sources_;  // sources with logins in progress
  std::deque<std::string> turns_;      // sources with queued logins, in round-robin order
  size_t queued_ = 0;                  // logins queued, all sources (max_pending)
  uint64_t turns_taken_ = 0;           // Login::turn
  std::deque<std::shared_ptr<Login>> reloads_;  // admins' reload requests
  bool stop_ = false;
  std::mutex held_mutex_;
  std::vector<Held> held_;             // failed answers waiting out failure_delay_ms
  mutable std::mutex usage_mutex_;  // once per loop tick and per scrape, never per message
  std::map<std::string, Usage> usage_;         // since the last usage log line
  std::map<std::string, Usage> usage_totals_;  // since the start
  uint64_t next_usage_write_ns_ = 0;  // the housekeeper's only
  std::mutex log_mutex_;              // the log's rate limits, shared by every thread that refuses
  log::RateLimit refusal_log_{kRefusalLogBurst};
  uint64_t log_window_ns_ = 0;
  uint32_t logged_in_window_ = 0;
  uint64_t suppressed_ = 0;
  UserCounters channels_created_;
  std::thread housekeeper_;
  std::vector<std::thread> verifiers_;
};

}  // namespace tw::auth
