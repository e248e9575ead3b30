// PendingWills: the Wills whose Will Delay Interval (MQTT 5, 3.1.3.2.2) has
// not ended yet. A connection that ends without DISCONNECT and whose session
// outlives it leaves its Will here; it is published when the delay or the
// session's expiry ends, whichever comes first [MQTT-3.1.3-9], by the tick of
// any loop that serves MQTT (publish_due_wills, tier/protocols.cc). A new
// connection of the same session takes it out first: with Clean Start 0 (the
// session resumes) it is dropped, with Clean Start 1 (the session ends) it is
// published at once. Keyed like the stored sessions (client_registry.h), and
// shared the same way by every loop thread: a mutex guards it, taken when a
// connection ends or begins and when a Will falls due, never per message; an
// atomic deadline lets every other tick pass without the mutex.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "auth/entitlements.h"
#include "mqtt/client_registry.h"
#include "mqtt/codec.h"
#include "session/session.h"

namespace tw::mqtt {

struct PendingWill {
  std::string topic;
  std::vector<uint8_t> payload;
  bool retain = false;
  uint8_t qos = 0;                  // a subscriber gets it at no more than this
  std::vector<uint8_t> properties;  // its property block as received (MQTT 5)
  uint32_t expiry_s = 0;            // its Message Expiry Interval; 0: none
  // Its user's grants when the connection ended (null: authentication off);
  // the users file in force when it is published decides (identity.cc).
  std::shared_ptr<const auth::Grants> grants;
  uint64_t due_ns = 0;  // monotonic
};

class PendingWills {
 public:
  // Wills held at most; past it, a Will whose delay would start is published at once.
  static constexpr size_t kMaxPending = 100'000;

  // False when full (the caller publishes it now).
  bool add(const ClientKey& key, PendingWill will);
  // The session's Will, removed; none when there is none.
  std::optional<PendingWill> take(const ClientKey& key);
  // The Wills due at now_ns, removed.
  std::vector<PendingWill> take_due(uint64_t now_ns);
  // Whether some Will may be due at now_ns (no lock taken).
  bool any_due(uint64_t now_ns) const { return now_ns >= next_due_ns_.load(std::memory_order_relaxed); }

 private:
  void update_next_due_locked();

  std::mutex mutex_;
  std::unordered_map<ClientKey, PendingWill, ClientKeyHash> wills_;
  std::atomic<uint64_t> next_due_ns_{UINT64_MAX};
};

// Publishes a Will on the loop whose session environment `env` is (its
// router; the channel is created if needed, held by no connection), if its
// user may still publish it. The reason, as for a PUBLISH.
Reason publish_will(const session::Session::Env& env, const PendingWill& will);
// The loop's tick (tier/protocols.cc): publishes the Wills that are due.
void publish_due_wills(PendingWills& wills, const session::Session::Env& env, uint64_t now_ns);

}  // namespace tw::mqtt
