// Spool: the broker's guaranteed messaging (docs/guaranteed.md,
// docs/ARCHITECTURE.md "Guaranteed messaging"): every durable queue, on one
// store thread of its own, which owns them all. Loop threads submit commands
// (a guaranteed publish, BIND, UNBIND, consumer ACK and NACK, a closed
// connection) and go on; the store thread takes everything submitted since
// its last turn as one batch:
//
//   1. applies it in order: a publish is appended to every queue that
//      attracts its topic (fan-out to N queues = N appends), or refused
//      whole when one of them is full;
//   2. syncs each queue appended to (group commit: one fdatasync per queue
//      per batch, whatever the batch's size), all at once (store/sync_crew.h);
//   3. only then answers each publish: PUBLISH_ACK OK when every append of it
//      is durable, else the reason (DISK_FULL, STORE_FAILED) for the whole
//      message;
//   4. delivers what the consumers' windows allow, read from the logs;
//   5. drops segments below each queue's acknowledgement floor.
//
// Answers go back as encoded frames through the ports' mailboxes
// (mailbox.h), one letter per port per turn. The hand-over is a
// mutex-guarded vector swapped once per batch, as the Committer's
// (store/committer.h): a lock per guaranteed command, which direct
// messaging never takes.
#pragma once
#include <array>
#include <condition_variable>
#include <functional>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tickwire/base/result.h"
#include "config/config.h"
#include "queue/mailbox.h"
#include "queue/queue.h"
#include "store/file_reaper.h"
#include "store/sync_crew.h"
#include "tickwire/wire/guaranteed.h"
#include "topic/topic.h"

namespace tw::queue {

// What a BIND asks besides its queue (docs/guaranteed.md): a durable topic
// subscription, a replay.
struct BindOptions {
  // Not empty: the queue is the durable topic subscription of this name, made
  // if absent (exclusive, this topic its one subscription); bound with
  // another topic while no one else is, it drops what it held and takes it.
  std::string topic;
  wire::ReplayFrom replay = wire::ReplayFrom::None;
  uint64_t from = 0;  // a seq, or a time (ns since the epoch)
};

class Spool {
 public:
  // What /metrics and the shutdown summary show (any thread: a copy under the lock).
  struct QueueStats {
    std::string name;
    uint64_t depth = 0;
    uint64_t oldest_ns = 0;  // when the oldest unacknowledged message was stored; 0 = none
    uint64_t bytes = 0;
    uint32_t consumers = 0;
    Queue::Stats counts;
    config::QueueConfig config;
    bool runtime = false;  // created by the admin API, not the configuration
  };
  // The bounds of the batch sync histogram (/metrics): from a fast SSD's
  // fdatasync to a stalled disk's.
  static constexpr std::array<uint64_t, 12> kSyncBucketsNs = {
      100'000, 250'000, 500'000, 1'000'000, 2'500'000, 5'000'000, 10'000'000, 25'000'000,
      50'000'000, 100'000'000, 250'000'000, 1'000'000'000};

  struct Stats {
    uint64_t publishes = 0;       // guaranteed publishes answered OK
    uint64_t refused = 0;         // answered with a refusal (any reason)
    uint64_t refused_full = 0;    // of them QUEUE_FULL
    uint64_t refused_disk = 0;    // of them DISK_FULL or STORE_FAILED
    uint64_t unrouted = 0;        // answered OK, but no queue attracts the topic
    uint64_t batches = 0;
    uint64_t syncs = 0;
    uint64_t sync_ns = 0;
    uint64_t max_sync_ns = 0;
    // Each batch's syncs (all its queues), by how long they took: sync_buckets[i]
    // counts those up to kSyncBucketsNs[i] and above the bound before; the last, the rest.
    std::array<uint64_t, kSyncBucketsNs.size() + 1> sync_buckets{};
    std::vector<QueueStats> queues;
  };

  // Opens every configured queue under config.store.dir (recovering it; what
  // recovery cut is logged) and starts the store thread.
  static Result<std::unique_ptr<Spool>> open(const config::BrokerConfig& config);
  // Answers what was submitted, then stops the thread.
  ~Spool();
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  // Before the first publish: an HA pair's fence (tier/ha_role.h). A batch
  // synced while it says no is answered NOT_PRIMARY, not OK: stored, but this
  // broker's term may have ended, so nothing is promised (the publisher
  // resends to the primary). Checked after the sync, just before answering.
  void set_fence(std::function<bool()> may_acknowledge) { may_acknowledge_ = std::move(may_acknowledge); }

  // Any thread. The port names the connection the answers go to.
  // `retransmit`: the publisher may have sent it before (its deliveries are flagged redelivered).
  void publish(std::shared_ptr<Port> port, uint64_t message_id, std::string topic, std::vector<uint8_t> payload,
               bool retransmit = false);
  void bind(std::shared_ptr<Port> port, uint32_t bind_id, uint32_t window, std::string queue, BindOptions options = {});
  // `unsubscribe`: the binding's durable subscription is deleted too (refused when it is a queue).
  void unbind(std::shared_ptr<Port> port, uint32_t bind_id, bool unsubscribe = false);
  void ack(std::shared_ptr<Port> port, uint32_t bind_id, uint64_t seq, bool cumulative);
  void nack(std::shared_ptr<Port> port, uint32_t bind_id, uint64_t seq);
  // The connection closed: its bindings end; what they had unacknowledged goes to the other consumers, flagged.
  void detach(std::shared_ptr<Port> port);
  // Replaces the file at `path` whole and durably (a temporary file,
  // fdatasync, rename), or removes it when `bytes` is empty, on the store
  // thread in submission order: the MQTT stored sessions (mqtt/session_file.h).
  void write_file(std::string path, std::vector<uint8_t> bytes);
  // An MQTT stored session's queue `<store.dir>/<name>` (exclusive, made if
  // absent) now attracts `patterns`; with `gone`, it is deleted, directory and all.
  // `expires_ns`: when the session expires (wall clock; 0: never, or connected):
  // then the store thread deletes the queue and the session's file `<store.dir>/<name less .q>`.
  void mqtt_queue(std::string name, std::vector<std::string> patterns, bool gone = false, uint64_t expires_ns = 0);
  // An MQTT QoS 1 or 2 PUBLISH: `payload` to the configured queues that attract
  // it, `header` + `payload` to the MQTT session queues that do.
  void publish_mqtt(std::shared_ptr<Port> port, uint64_t message_id, std::string topic, std::vector<uint8_t> header,
                    std::vector<uint8_t> payload, bool retransmit);
  // BIND by an MQTT session to its own queue (a native BIND never reaches those).
  void bind_mqtt(std::shared_ptr<Port> port, uint32_t bind_id, uint32_t window, std::string queue);

  Stats stats() const;
  uint32_t max_consumer_window() const { return max_window_; }

  // Queues created and deleted at runtime (the admin API, docs/guaranteed.md).
  // Any thread but the store thread: each runs there between two batches and
  // waits for it. A created queue is written to `<store.dir>/queues.list` and
  // opened again at every start; a queue of the configuration cannot be deleted.
  Status create_queue(const config::QueueConfig& queue);
  Status delete_queue(const std::string& name);
  Result<uint64_t> purge_queue(const std::string& name);  // how many messages it dropped
  struct Browsed {
    uint64_t seq = 0;
    uint64_t timestamp_ns = 0;
    std::string topic;
    std::string payload;
  };
  Result<std::vector<Browsed>> browse_queue(const std::string& name, uint64_t from, size_t max);

 private:
  enum class Kind : uint8_t { Publish, Bind, Unbind, Ack, Nack, Detach, Call, File, MqttQueue };
  struct Command {
    Kind kind = Kind::Publish;
    std::shared_ptr<Port> port;
    uint64_t id = 0;        // message_id (Publish), seq (Ack, Nack)
    uint32_t bind_id = 0;
    uint32_t window = 0;
    bool flag = false;      // cumulative (Ack), retransmit (Publish)
    std::string name;       // topic (Publish), queue (Bind), path (File)
    std::vector<uint8_t> payload;  // the file's bytes (File)
    std::function<void()> call;    // Call: an admin operation, run on the store thread
    bool mqtt = false;             // an MQTT PUBLISH (header: its session-queue prefix), an MQTT BIND
    std::vector<uint8_t> header;
    std::vector<std::string> patterns;  // MqttQueue
    BindOptions bind;                   // Bind
  };
  class Turn;
  struct Unsubscribe {  // an UNBIND's, done once the batch is answered
    const Command* command;
    Queue* queue;
  };

  // Syncs in flight at once: one per queue a batch appended to, up to this
  // (fan-out 5 is five queues; more queues than this share the crew).
  static constexpr size_t kParallelSyncs = 8;

  explicit Spool(uint32_t max_window) : max_window_(max_window) {}
  void submit(Command command);
  void run();
  void commit(std::vector<Command>& batch);
  // Runs `fn` on the store thread and waits for its answer.
  Status on_store_thread(const std::function<Status()>& fn);
  Queue* find_queue(std::string_view name);
  Queue* holder(const Port* port, uint32_t bind_id);  // the queue a binding is of
  void bind_one(Turn& turn, const Command& c);
  void unbind_one(Turn& turn, const Command& c, std::vector<Unsubscribe>& unsubscribes);
  void unsubscribe(Turn& turn, const Unsubscribe& u);
  // The durable subscription a BIND names, made or moved to its topic; null, answered, when refused.
  Queue* durable_subscription(Turn& turn, const Command& c);
  Status add_runtime_queue(const config::QueueConfig& qc);  // the store thread's
  Status remove_queue(size_t index);  // a runtime queue: from the list, then its directory
  void settle_all();
  Status save_runtime_queues() const;  // the store thread's
  void refresh_stats();        // before the thread runs, and after an admin call
  void count_batch(const Stats& counts, size_t syncs, uint64_t took);
  void refresh_queue_stats();  // under mutex_

  std::function<bool()> may_acknowledge_;  // null: not in an HA pair
  std::string dir_;
  store::LogOptions log_options_;
  topic::Limits topic_limits_;
  size_t configured_ = 0;  // queues_[0, configured_) come from the configuration
  Queue* open_mqtt_queue(const std::string& name);
  void drop_mqtt_queue(const std::string& name);
  void expire_mqtt_queues();  // the store thread, at least once a second while one has a deadline

  std::vector<std::unique_ptr<Queue>> queues_;  // the store thread's, once it runs
  uint32_t max_window_;
  uint64_t next_serial_ = 1;  // the store thread's: names each binding
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Command> submitted_;
  bool stopping_ = false;
  Stats stats_;  // under mutex_; its queues refreshed each turn
  store::SyncCrew sync_crew_{kParallelSyncs - 1};  // the store thread is the crew's first member
  store::FileReaper reaper_;  // dropped segments' files, unlinked off the store thread
  std::thread thread_;
};

}  // namespace tw::queue
