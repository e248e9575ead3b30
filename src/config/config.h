// Broker configuration: embedded defaults, optionally overridden by a TOML
// file, then by command-line flags. Every bound the broker enforces is here,
// with its default documented in docs/configuration.md.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/log.h"
#include "tickwire/base/result.h"
#include "config/listener.h"

namespace tw::config {

// One [[delay_history]] table: the topics (patterns) recorded for delay_ms.
struct DelayHistory {
  std::vector<std::string> topics;
  uint32_t delay_ms = 0;
};

struct Limits {
  uint32_t max_frame = 1u << 20;               // bytes, largest accepted frame
  uint32_t max_subscriptions = 10'000;         // patterns per connection
  uint32_t max_registrations = 100'000;        // publish ids per connection
  uint32_t max_connections = 100'000;
  uint32_t max_channels = 1'000'000;
  uint32_t max_channels_per_connection = 100'000;  // channels one connection may create (REGISTER of a new topic)
  uint32_t max_channels_per_user = 0;  // channels the open connections of one user may have created; 0 = no bound
  uint64_t max_output_buffer = 64ull << 20;    // bytes queued to one connection
  // Bytes all connections together hold in partial frames (per loop thread: an
  // equal share each); past it the largest holder is closed (FRAME_TOO_LARGE).
  uint64_t max_partial_input = 256ull << 20;
  uint32_t max_topic_length = 256;
  uint32_t max_topic_depth = 16;
  // The HTTP listener (docs/configuration.md, "HTTP"): open connections, the
  // request line and headers (431 past it), a request body (413 past it).
  uint32_t max_http_connections = 1'024;
  uint32_t max_http_header_bytes = 16u << 10;
  uint32_t max_http_body = 1u << 20;
  // Largest WebSocket message (all its fragments together); past it the
  // connection is closed with 1009.
  uint32_t max_websocket_message = 2u << 20;
};

// Guaranteed messaging (docs/guaranteed.md): off while `dir` is "".
struct StoreConfig {
  std::string dir;                        // one subdirectory per queue; "" = no store, no guaranteed messaging
  uint64_t segment_bytes = 16ull << 20;   // a queue's log segment is sealed at this size
  uint32_t publish_window = 256;          // guaranteed publishes one connection may have unacknowledged
  uint32_t max_consumer_window = 1'024;   // messages one BIND may have delivered and unacknowledged
};

// One [[queue]] table: a durable queue that attracts guaranteed publishes by its subscriptions.
struct QueueConfig {
  std::string name;                        // its directory under store.dir: letters, digits, '-', '_', '.'
  std::vector<std::string> subscriptions;  // topic patterns (wildcards allowed)
  uint64_t max_messages = 1'000'000;       // unacknowledged messages; past it publishes are refused (QUEUE_FULL)
  uint64_t max_bytes = 1ull << 30;         // the queue's log on disk; past it publishes are refused (QUEUE_FULL)
  bool exclusive = false;                  // one consumer at a time gets everything; else round robin
  // Replay (docs/guaranteed.md): acknowledged messages kept, whole segments,
  // while the queue's log is within retain_bytes and they are younger than
  // retain_age_s (0: any age). retain_bytes 0: none kept (replay reaches only
  // what is unacknowledged). New messages take their room first (max_bytes).
  uint64_t retain_bytes = 0;
  uint64_t retain_age_s = 0;
  // A durable topic subscription (docs/guaranteed.md): made by a consumer's
  // BIND naming a topic, exclusive, its one subscription that topic.
  bool durable_subscription = false;
};

// [ha]: one broker of a primary/backup pair arbitrated by etcd
// (docs/operations.md, "High availability"); off while `etcd` is empty.
struct HaConfig {
  std::vector<std::string> etcd;            // etcd client URLs, "http://127.0.0.1:2379"
  std::string key = "tickwire/ha/leader";   // the leader key both brokers of the pair campaign for
  uint32_t ttl_s = 2;                       // the lease: a dead primary's term ends this long after its last renewal
  std::string advertise;                    // HOST:PORT clients should use for this broker; "" = its first native listener
};

// [[link]]: a link to an upstream broker (docs/ARCHITECTURE.md, "Broker links").
// What the broker's subscribers want and nothing local serves is subscribed
// upstream once per pattern, and what comes back is published here.
struct LinkConfig {
  std::string name;                    // in logs, /metrics and /api/v1/links
  std::vector<std::string> upstreams;  // HOST:PORT, tried in order; the next one when one is lost
  std::string user;                    // the upstream's user for this link ("" = anonymous)
  std::string password_file;           // its password: the file's first line
  bool tls = false;                    // TLS to the upstream
  std::string ca;                      // "" = the system's trusted CAs
  std::string cert, key;               // a client certificate, when the upstream asks for one
  uint32_t reconnect_min_ms = 100;     // first backoff after a failed attempt; doubles
  uint32_t reconnect_max_ms = 5'000;   // backoff ceiling
  uint32_t linger_ms = 5'000;          // an upstream subscription outlives its last local interest by this
  // Patterns of this broker's own channels the link publishes upstream
  // (publishing toward the core); never what a link brought in here.
  std::vector<std::string> publish_upstream;
  // How the link publishes into this broker: a native connection to its
  // first plaintext native listener, as this user when authentication is on.
  std::string local_user;
  std::string local_password_file;
};

struct BrokerConfig {
  std::string listen = "127.0.0.1:9400";       // native protocol, HOST:PORT (port 0 = any)
  // [[listener]] tables; empty = one native plaintext listener on `listen`.
  // With listeners, `listen` set on the command line moves the first one.
  std::vector<Listener> listeners;
  // Without [[listener]] tables, the embedded default MQTT listener (docs/mqtt.md):
  // a port that is taken is logged and skipped; "" = none.
  std::string mqtt_listen = "127.0.0.1:1883";
  bool mqtt_listen_set = false;  // set by the file or the command line: then a failed bind is an error
  // Without [[listener]] tables, the embedded default HTTP listener (admin
  // API, metrics, WebSocket): optional like mqtt_listen; "" = none.
  std::string http_listen = "127.0.0.1:9401";
  bool http_listen_set = false;
  uint32_t http_request_timeout_ms = 10'000;   // an HTTP request must be whole this long after its first byte
  uint32_t http_idle_timeout_ms = 60'000;      // close a keep-alive HTTP connection idle this long
  // Origins besides the HTTP listener's own from which a browser may publish,
  // run admin actions or open a WebSocket ("https://console.example.com"; "*" = any).
  std::vector<std::string> http_allowed_origins;
  std::string server_name = "tickwired";
  uint32_t heartbeat_ms = 5'000;               // offered to clients; a client may ask for another
  uint32_t idle_timeout_ms = 15'000;           // close a connection silent this long
  uint32_t hello_timeout_ms = 5'000;           // close a connection that sends no HELLO
  uint32_t frame_deadline_ms = 10'000;         // a frame must be whole this long after its first byte
  uint32_t handshake_timeout_ms = 2'000;       // close a TLS connection whose handshake has not completed
  uint32_t shutdown_grace_ms = 500;            // time to flush output on shutdown
  log::Level log_level = log::Level::Info;
  // Interactive providers (docs/ARCHITECTURE.md, "Interactive channels").
  uint32_t request_timeout_ms = 5'000;         // a provider must answer a REQUEST within this
  uint32_t release_linger_ms = 5'000;          // keep an unwatched interactive channel open this long
  uint32_t not_found_ttl_ms = 10'000;          // remember a NOT_FOUND answer this long
  uint32_t channel_linger_ms = 30'000;         // free a channel nobody publishes, provides or subscribes after this
  std::string provider_balance = "least-loaded";  // or "round-robin"
  // What to do with a subscriber whose queue passes limits.max_output_buffer,
  // for subscriptions that do not choose: "conflate", "drop" or "disconnect".
  std::string slow_consumer_policy = "conflate";
  // Loop threads (docs/configuration.md, "Threads"). 0 and 0 is single-threaded:
  // one loop does everything. Otherwise both are at least 1.
  uint32_t gateways = 0;
  uint32_t access_points = 0;
  // Linux cpu list ("2-7", "0,2,4-6") the loop threads are pinned to in order,
  // gateways first, then access points; "" = no pinning.
  std::string cpus;
  // The scheduler slice each loop thread asks for, µs (set_current_thread_slice
  // in base/affinity.h): short, so input that wakes a loop runs it at once; 0
  // leaves the kernel's default.
  uint32_t loop_slice_us = 100;
  // Delayed subscriptions: memory bound of the delay lines, and the bucket
  // within which a delayed stream is conflated to one update per channel.
  uint64_t delay_max_bytes = 256ull << 20;
  uint32_t delay_bucket_ms = 1'000;
  // [[delay_history]]: channels recorded for a delay from their creation, so
  // that a subscriber with that delay gets the image as it was then at once.
  std::vector<DelayHistory> delay_history;
  // Users, authentication and entitlements (docs/security.md). "" = off:
  // every connection may do everything, and only loopback listeners start.
  std::string auth_file;
  // Listeners on other addresses start without auth_file only with this set;
  // with auth_file, connections without credentials get its [anonymous] rules.
  bool allow_anonymous = false;
  uint32_t auth_failure_delay_ms = 1'000;      // a failed login's answer waits this long
  std::string usage_log;                       // per-user usage lines appended here; "" = none
  uint32_t usage_interval_ms = 60'000;         // one line per user per interval
  // The longest MQTT keep-alive a client may use, seconds; 0 = any. An MQTT 5
  // client that asks for more (or for none, 0) is told this one in CONNACK
  // (Server Keep Alive); 3.1.1 has no way to tell it, and keeps its own.
  uint32_t mqtt_max_keepalive_s = 0;
  uint32_t sys_interval_ms = 10'000;           // $SYS topics published this often (mosquitto's sys_interval); 0 = never
  uint32_t auth_verifier_threads = 2;          // password checks at once (at most the hardware threads)
  uint32_t auth_max_pending_per_source = 4;    // one address's logins in progress; more are refused at once
  // Field definitions (NAME ID TYPE lines, src/fields/dictionary.h) that
  // extend the built-in dictionary for every surface that names fields
  // (docs/configuration.md, "The field dictionary"); "" = the built-in one.
  std::string fields_file;
  Limits limits;
  StoreConfig store;
  std::vector<QueueConfig> queues;
  HaConfig ha;
  std::vector<LinkConfig> links;
};

// What the broker binds: the [[listener]] list, or the native plaintext
// listener on `listen` and the optional MQTT and HTTP ones on `mqtt_listen`
// and `http_listen`. The first
// is the one --print-port-file reports.
std::vector<Listener> effective_listeners(const BrokerConfig& config);

// True when one loop does everything (gateways and access_points both 0).
inline bool single_threaded(const BrokerConfig& config) {
  return config.gateways == 0 && config.access_points == 0;
}
// How many loop threads the config asks for: 1 when single-threaded.
inline uint32_t loop_thread_count(const BrokerConfig& config) {
  return single_threaded(config) ? 1 : config.gateways + config.access_points;
}

// Parses TOML text over the embedded defaults. Errors name the source, line
// and key ("broker.toml:3: key 'heartbeat_ms': expected an integer"); syntax
// errors name line and column; unknown keys are errors. Keys that constrain
// each other are checked once the file is read ("broker.toml: keys 'gateways'
// and 'access_points': ...").
Result<BrokerConfig> parse_toml(std::string_view text, const std::string& source_name);
// Reads and parses a file; the path is the source name in errors.
Result<BrokerConfig> load_file(const std::string& path);

// Splits "HOST:PORT" or "[IPV6]:PORT" (brackets removed from host), port
// 0..65535; false when malformed.
bool split_host_port(std::string_view text, std::string& host, uint16_t& port);

// Set one key by its TOML name ("heartbeat_ms", "limits.max_frame"), checked
// against its range. Used by the TOML parser and by command-line overrides.
// The error is the reason alone ("must be between 64 and 1073741824, got 3"),
// for the caller to prefix with where the value came from.
Status set_integer(BrokerConfig& config, std::string_view key, int64_t value);
Status set_string(BrokerConfig& config, std::string_view key, std::string_view value);
Status set_boolean(BrokerConfig& config, std::string_view key, bool value);
// A key's value as text, as a TOML file or a flag would give it ("5000",
// "least-loaded", "info"); "" for a string key that is empty or a key that
// is not a plain integer or string key. For help texts ("default: ...").
std::string value_text(const BrokerConfig& config, std::string_view key);

// Checks every key of a config built in code or patched after parsing, and
// the keys that constrain each other (gateways with access_points, cpus with
// the thread count); the error names the key or keys ("key 'limits.max_frame':
// must be ...", "keys 'gateways' and 'access_points': ...").
Status validate(const BrokerConfig& config);

// A queue's (or link's) name: 1..128 letters, digits, '-', '_' or '.', not "." or ".."
// (a queue's name is its directory under store.dir).
bool valid_queue_name(std::string_view name);

}  // namespace tw::config
