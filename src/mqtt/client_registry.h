// ClientRegistry: which connection holds each MQTT client identifier, so
// that a new CONNECT with an identifier in use takes it over
// ([MQTT-3.1.4-2]): the older connection is told to go, and closes itself
// with DISCONNECT 0x8E (Session taken over) on its loop's next tick.
// It also keeps the state of sessions that outlive their connection
// (Session Expiry Interval, or 3.1.1's Clean Session 0) until a CONNECT
// with the same identifier resumes them or they expire, and passes the
// session of a connection that was taken over to the connection that took
// it over, when that one asked for it (Clean Start 0) and waits.
//
// Sessions are keyed by (user, client id), never by the client id alone: a
// session belongs to the user that created it (MQTT 5 3.1.3.1 lets a server
// scope client identifiers). A CONNECT by another user with the same client
// id neither resumes nor takes over the first user's session: it is another
// session. Every anonymous connection is the one user "" (as is every
// connection when authentication is off): they share one namespace.
//
// One per broker (mqtt/server_state.h), shared by every loop thread:
// a mutex guards it, taken at CONNECT and at a connection's end only, never
// per message. A connection registers an atomic flag it owns and removes it
// (under the mutex) before it is destroyed, so a flag in the map is alive.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tw::mqtt {

// Whose session: the user's name ("" for anonymous, and for everyone when
// authentication is off) and the client identifier.
struct ClientKey {
  std::string user;
  std::string client_id;
  bool operator==(const ClientKey&) const = default;
};

struct ClientKeyHash {
  size_t operator()(const ClientKey& k) const {
    const size_t h = std::hash<std::string>{}(k.user);
    return h ^ (std::hash<std::string>{}(k.client_id) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
  }
};

// A QoS 1 or 2 message sent to the client and not yet acknowledged (4.4):
// resent, with DUP, when the session resumes; `released`: PUBREC came, the
// PUBREL is what is resent.
struct OutboundMessage {
  uint16_t packet_id = 0;
  uint8_t qos = 1;
  bool released = false;
  std::vector<uint8_t> packet;  // the whole PUBLISH as sent
  // Its Message Expiry deadline (monotonic ns; 0 = none): past it, it is not
  // resent; before it, it is resent with the interval that is left.
  uint64_t expires_ns = 0;
  size_t expiry_at = 0;  // where the packet's Message Expiry Interval is (codec.h); 0: it has none
};

// The sequence number (cache::Channel::seq) of the last message of each
// channel a session was sent or offered, by topic: what it has had already
// (docs/mqtt.md, "Sessions"). Looked up by a channel's topic without a copy.
struct SeenHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using SeenSeqs = std::unordered_map<std::string, uint64_t, SeenHash, std::equal_to<>>;

// What a session keeps between connections: its subscriptions, the QoS 2
// packet ids received but not yet released, the QoS 1 and 2 messages
// sent but not yet acknowledged (4.1), and what it has seen of each channel.
struct StoredSession {
  struct Subscription {
    std::string filter;
    uint8_t retain_handling = 0;
    uint8_t qos = 0;
    uint32_t id = 0;  // Subscription Identifier
    bool no_local = false;
    bool retain_as_published = false;
  };
  std::vector<Subscription> subscriptions;
  std::vector<uint16_t> awaiting_pubrel;
  std::vector<OutboundMessage> outbound;  // in the order they were first sent
  SeenSeqs seen;
  uint64_t expires_ns = 0;  // monotonic
};

class ClientRegistry {
 public:
  // Stored sessions at most; past it, a session that ends is not kept.
  static constexpr size_t kMaxStored = 100'000;

  // Keeps the state of a session whose connection ended; false when full.
  bool store(const ClientKey& key, StoredSession state, uint64_t now_ns);
  // The stored state of `key`, removed from the registry; none when absent or expired.
  std::optional<StoredSession> take(const ClientKey& key, uint64_t now_ns);

  // `taken_over` becomes the holder of `key`; the previous holder's
  // flag is set. True when there was one. `waits`: the new holder waits for
  // the previous one's session (take_handover).
  bool claim(const ClientKey& key, std::atomic<bool>* taken_over, bool waits = false);
  // Removes the entry if `taken_over` still holds it.
  void release(const ClientKey& key, const std::atomic<bool>* taken_over);
  // What became of a session as its connection ended (end()).
  enum class Ended {
    Kept,        // stored for a later CONNECT (or nothing to keep)
    HandedOver,  // to the connection that took it over and waits for it
    Over,        // the connection that took it over started clean: the session is over
  };
  // A holder's connection ends, with its session (none: nothing to keep).
  // Decided under the lock, so that a CONNECT taking it over meanwhile
  // cannot miss it: still the holder, the state is stored (and the holder
  // leaves); taken over, it goes to the new holder if that one waits for it,
  // is stored if the new holder is gone too, and is dropped otherwise.
  Ended end(const ClientKey& key, const std::atomic<bool>* holder, std::optional<StoredSession> state,
            uint64_t now_ns);
  // For a holder that claimed with `waits`: nullopt while nothing was handed
  // over yet; then the session handed over (itself optional). Stops the wait.
  std::optional<std::optional<StoredSession>> take_handover(const ClientKey& key,
                                                            const std::atomic<bool>* taken_over);
  // A waiting holder that gives up: what is handed over later is not for it.
  void stop_waiting(const std::atomic<bool>* taken_over);

 private:
  std::mutex mutex_;
  void drop_expired(uint64_t now_ns);

  bool store_locked(const ClientKey& key, StoredSession state, uint64_t now_ns);

  std::unordered_map<ClientKey, std::atomic<bool>*, ClientKeyHash> holders_;
  std::unordered_map<ClientKey, StoredSession, ClientKeyHash> stored_;
  std::unordered_set<const std::atomic<bool>*> waiting_;  // holders that wait for a handover
  // Sessions handed over to a waiting holder, by key: (the holder, its session).
  std::unordered_map<ClientKey, std::pair<const std::atomic<bool>*, std::optional<StoredSession>>, ClientKeyHash>
      handed_over_;
};

}  // namespace tw::mqtt
