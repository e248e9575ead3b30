// A client of etcd's v3 JSON gateway (etcd 3.4: POST /v3/...), for what the
// HA pair needs from etcd and nothing more: a lease, a leader key created
// under that lease, and reads of who holds it. The key's create revision is
// the leader's epoch: etcd's revisions only grow, so every new term has a
// higher one, and a record stamped with an older epoch is from a deposed
// primary (docs/ARCHITECTURE.md, "High availability").
//
// Blocking calls with a timeout, for the election thread alone (never a loop
// thread). One connection, kept between calls; on a transport error the next
// endpoint of the list is tried.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tickwire/base/result.h"

namespace tw::ha {

struct EtcdOptions {
  std::vector<std::string> endpoints;  // "http://127.0.0.1:2379", tried in order
  std::chrono::milliseconds timeout{1000};
};

struct Lease {
  int64_t id = 0;
  int64_t ttl_s = 0;  // what etcd granted (it may raise a short TTL to its minimum)
};

struct LeaderKey {
  std::string value;  // the holder's name
  int64_t epoch = 0;  // the key's create revision
  int64_t lease = 0;
};

struct Campaign {
  bool won = false;
  LeaderKey leader;  // this process's key when won, the holder's otherwise
};

class Etcd {
 public:
  explicit Etcd(EtcdOptions options);
  ~Etcd();
  Etcd(const Etcd&) = delete;
  Etcd& operator=(const Etcd&) = delete;

  Result<Lease> grant(int64_t ttl_s);
  // The lease's remaining TTL after renewal; 0 when etcd no longer knows it
  // (expired or revoked: every key under it is gone).
  Result<int64_t> keep_alive(int64_t lease);
  // Revoking a lease deletes every key attached to it, in one step.
  Status revoke(int64_t lease);
  // Seconds the lease has left; -1 when etcd no longer knows it.
  Result<int64_t> time_to_live(int64_t lease);
  // Creates key = value under the lease if nobody holds the key (one
  // transaction: compare create revision == 0); otherwise reads the holder.
  Result<Campaign> campaign(std::string_view key, std::string_view value, int64_t lease);
  Result<std::optional<LeaderKey>> leader(std::string_view key);
  // Deletes the key only if it is still the one created at `epoch`: a
  // deposed leader cannot delete its successor's key. True if deleted.
  Result<bool> resign(std::string_view key, int64_t epoch);

  const std::string& endpoint() const { return options_.endpoints[current_]; }

 private:
  struct Connection;
  // POSTs a JSON body to path on the current endpoint, then the others.
  Result<std::string> post(std::string_view path, const std::string& body);

  EtcdOptions options_;
  std::unique_ptr<Connection> connection_;
  size_t current_ = 0;
};

}  // namespace tw::ha
