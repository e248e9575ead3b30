// Stored MQTT sessions on disk (docs/mqtt.md, "Sessions"): with a store
// (`store.dir`), every session that outlives its connection (MQTT 5 Session
// Expiry > 0, 3.1.1 Clean Session 0) is one file in `<store.dir>/mqtt-sessions`,
// so that a broker restarted (SIGTERM or SIGKILL) still has it: its user,
// client id, subscriptions with their options and identifiers, and its expiry.
//
// One file per session, named by a hash of (user, client id), rewritten
// whole (temporary file, fdatasync, rename) by the store thread when the
// session starts, changes its subscriptions or loses its connection, and
// removed when it ends. A file is small and written rarely (never per
// message), so a whole rewrite is simpler than a log and cannot tear: a
// crash leaves the old file or the new one.
//
// Format (little-endian): "TWMS", u32 version (1), u32 body length, the body,
// u32 CRC-32C of the body. Body: user and client id (u32 length + bytes each),
// u32 Session Expiry Interval (s; UINT32_MAX: never), u64 expires_at (wall
// clock ns when the connection ended; 0: the session was connected when
// written, its expiry counts from the broker's start), u32 subscription count,
// each: filter (u32 length + bytes), u8 QoS, u8 Retain Handling, u8 flags
// (1: No Local, 2: Retain As Published), u32 Subscription Identifier.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tickwire/base/result.h"
#include "mqtt/client_registry.h"

namespace tw::mqtt {

struct PersistedSession {
  ClientKey key;
  uint32_t expiry_s = 0;
  uint64_t expires_at_ns = 0;  // wall clock; 0: connected when written
  std::vector<StoredSession::Subscription> subscriptions;
};

std::vector<uint8_t> encode_session(const PersistedSession& session);
// Refuses (with the reason) a file that is truncated, corrupt, or of another version.
Result<PersistedSession> decode_session(std::span<const uint8_t> bytes);
// The file's name in the sessions directory: 16 hex digits of a hash of the key.
std::string session_file_name(const ClientKey& key);

// A message in a stored session's queue (a record of queue::Queue, mqtt()):
// its payload is prefixed with u8 QoS, u64 Message Expiry deadline (wall clock
// ns; 0: none), u32 length and the forwarded properties less their head
// (codec.h), so that the session can send it as it would have live.
struct QueuedMessage {
  uint8_t qos = 1;
  uint64_t expires_at_ns = 0;
  std::span<const uint8_t> properties;
  std::span<const uint8_t> payload;
};
std::vector<uint8_t> encode_queued_header(uint8_t qos, uint64_t expires_at_ns, std::span<const uint8_t> properties);
// False when `record` is too short for its header.
bool decode_queued(std::span<const uint8_t> record, QueuedMessage& out);
// The queue of the session `key` (queue::Spool::mqtt_queue), under store.dir.
inline std::string session_queue_name(const ClientKey& key) { return "mqtt-sessions/" + session_file_name(key) + ".q"; }

// The directory under `store_dir`.
inline std::string sessions_dir(const std::string& store_dir) { return store_dir + "/mqtt-sessions"; }

// How long a session read at start still has: its expiry counts from when its
// connection ended (from `now_wall_ns` when it was connected at the crash); 0: expired.
uint64_t remaining_ns(const PersistedSession& session, uint64_t now_wall_ns);

// Reads every session file of `dir` at start. A file that cannot be decoded is
// refused (logged, renamed `<name>.bad`) and the rest load; an expired session's
// file is removed. Creates `dir` when absent.
// `expired`, when given, gets the keys of the expired sessions (their queues go too).
std::vector<PersistedSession> load_sessions(const std::string& dir, uint64_t now_wall_ns,
                                            std::vector<ClientKey>* expired_keys = nullptr);

}  // namespace tw::mqtt
