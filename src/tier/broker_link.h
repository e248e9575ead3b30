// BrokerLink: one [[link]] to an upstream broker (docs/ARCHITECTURE.md,
// "Broker links"). It runs on its own thread with two libtickwire clients:
// upstream, one subscriber for all of this broker's interest (each pattern
// subscribed once however many local subscriptions share it); locally, a
// publisher that brings what comes back into this broker, whose cache then
// serves every local subscriber. The loops only call interest(), which
// queues under a mutex (once per subscription change, never per message).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "config/config.h"

namespace tw::client {
class Client;
struct Message;
}

namespace tw::tier {

// What the admin API and /metrics show of a link (any thread).
struct LinkState {
  std::string name;
  bool connected = false;
  std::string upstream;         // the address in use, or the one tried next
  uint32_t patterns = 0;        // subscribed upstream (lingering ones included)
  uint64_t channels = 0;        // distinct topics brought in
  uint64_t images = 0;          // received upstream and published here
  uint64_t updates = 0;
  uint64_t statuses = 0;
  uint64_t gaps = 0;            // upstream updates whose seq was not last + 1
  uint64_t refused = 0;         // publishes refused here or upstream (back pressure, rights)
  uint64_t published_upstream = 0;  // messages of this broker's channels published upstream
  uint64_t connects = 0;        // upstream connections made (the first included)
  uint64_t failed_connects = 0;
};

class BrokerLink {
 public:
  explicit BrokerLink(config::LinkConfig config);
  ~BrokerLink();
  BrokerLink(const BrokerLink&) = delete;
  BrokerLink& operator=(const BrokerLink&) = delete;

  // Any thread: one local subscription to `pattern` came (add) or went.
  void interest(std::string_view pattern, bool add);
  // Starts the thread; it publishes into this broker at host:port.
  void start(std::string local_host, uint16_t local_port);
  void stop();
  LinkState state() const;
  const std::string& name() const { return config_.name; }

 private:
  struct Change {
    std::string pattern;
    bool add;
  };
  void run();
  bool connect_local();
  void take_changes(uint64_t now_ms);
  void expire_lingers(uint64_t now_ms);
  void connect_upstream(uint64_t now_ms);
  void on_upstream(const client::Message& m);
  void pass_status(const client::Message& m);
  void upstream_lost(uint64_t now_ms);
  void subscribe_upstream(const std::string& pattern);
  void gap_seen(const client::Message& m, uint64_t lost);
  void refresh_patterns();
  void subscribe_local();
  void on_local(const client::Message& m);

  config::LinkConfig config_;
  std::string local_host_;
  uint16_t local_port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};

  std::mutex changes_mutex_;  // per subscription change, never per message
  std::vector<Change> changes_;

  // The link thread's own.
  std::unique_ptr<client::Client> local_;
  std::unique_ptr<client::Client> upstream_;
  std::unordered_map<std::string, uint32_t> counts_;     // local subscriptions per pattern
  std::unordered_map<std::string, uint64_t> lingering_;  // pattern -> when its upstream subscription goes
  std::unordered_set<std::string> subscribed_;           // patterns subscribed upstream
  std::unordered_map<uint32_t, std::string> sub_patterns_;  // upstream subscription id -> pattern
  std::unordered_set<std::string> refresh_;              // patterns to subscribe afresh after a gap
  // Each topic brought in so far: its local publish id, and whether the link
  // said STALE of it (lost upstream, or a gap upstream) and owes it a fresh
  // image, then OK.
  struct Topic {
    uint32_t publish_id = 0;
    bool stale = false;
  };
  std::unordered_map<std::string, Topic> topics_;
  Topic* topic_of(const client::Message& m);  // advertised here on first sight
  // Publishing toward the core: this broker's topics published upstream, by
  // their upstream publish id (the upstream connection's; cleared with it).
  std::unordered_map<std::string, uint32_t> pushed_;
  // Local subscriptions the link itself makes (publish_upstream): their
  // interest is not passed upstream (adds and removes still to come).
  struct OwnInterest {
    uint32_t adds = 0;
    uint32_t removes = 0;
  };
  std::unordered_map<std::string, OwnInterest> own_interest_;
  size_t next_upstream_ = 0;
  uint32_t backoff_ms_ = 0;
  uint64_t retry_at_ms_ = 0;

  // Read by the admin side; written by the link thread (relaxed counters).
  mutable std::mutex address_mutex_;
  std::string address_;
  std::atomic<bool> connected_{false};
  std::atomic<uint32_t> patterns_{0};
  std::atomic<uint64_t> channels_{0}, images_{0}, updates_{0}, statuses_{0}, gaps_{0}, refused_{0};
  std::atomic<uint64_t> connects_{0}, failed_connects_{0}, published_upstream_{0};
};

}  // namespace tw::tier
