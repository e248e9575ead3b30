// Queue: one durable queue (docs/guaranteed.md). Its messages are a Log
// (store/log.h) in a directory of its own, `<store.dir>/<name>`; it attracts
// guaranteed publishes whose topic matches one of its subscriptions, and
// hands them to its bound consumers, each within its window, round robin
// (or all to the first bound, when the queue is exclusive).
//
// What is held in memory is bounded by the consumers' windows: the
// messages delivered and not yet acknowledged (a seq each), and those to
// deliver again. A message's bytes are read from the log when it is
// delivered, never kept, so a slow consumer costs the broker no memory.
//
// The acknowledgement floor is the lowest seq not yet acknowledged: whole
// segments below it are dropped (unless retain_bytes keeps them for
// replay), and it is written to `<dir>/floor` (no sync: a floor lost in a
// crash is an older one, which only means more redeliveries). After a
// restart every message at or above the floor is delivered again, flagged
// redelivered when it was stored before the restart (it may have been
// delivered then).
//
// Replay moves the queue's delivery back to an earlier seq: every message
// held from there on is delivered again, flagged, to whichever bindings
// have room, as if it had never been acknowledged.
//
// Not thread-safe: the store thread owns every queue (spool.h).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tickwire/base/result.h"
#include "config/config.h"
#include "queue/mailbox.h"
#include "store/log.h"

namespace tw::queue {

// Record flags (store/record.h) of a queue's messages.
inline constexpr uint8_t kMaybeDuplicate = 0x01;

struct Consumer {
  uint64_t serial = 0;  // unique in the spool
  std::shared_ptr<Port> port;
  uint32_t bind_id = 0;
  uint32_t window = 1;
  uint32_t in_flight = 0;  // delivered, not acknowledged
};

class Queue {
 public:
  struct Stats {
    uint64_t enqueued = 0;       // messages appended (made durable or not)
    uint64_t refused_full = 0;   // publishes refused: max_messages or max_bytes
    uint64_t delivered = 0;      // DELIVERs, redeliveries included
    uint64_t redelivered = 0;
    uint64_t acknowledged = 0;
  };
  using Sink = std::function<void(const Consumer& to, const store::Record& record, bool redelivered)>;

  static Result<std::unique_ptr<Queue>> open(const config::QueueConfig& config, const std::string& store_dir,
                                             const store::LogOptions& options, store::Recovery* recovery);
  ~Queue();

  const std::string& name() const { return config_.name; }
  // An MQTT stored session's queue (docs/mqtt.md, "Sessions"): it takes MQTT
  // QoS 1 and 2 PUBLISHes only, each record's payload prefixed with what the
  // session needs to send it (its QoS, expiry and properties); its
  // subscriptions follow the session's.
  bool mqtt() const { return mqtt_; }
  void make_mqtt() { mqtt_ = true; }
  void set_subscriptions(std::vector<std::string> patterns) { config_.subscriptions = std::move(patterns); }
  bool durable_subscription() const { return config_.durable_subscription; }
  const std::string& dir() const { return dir_; }
  // When its session expires (wall clock ns; 0: never, or its connection lives).
  uint64_t mqtt_expires_ns = 0;
  const config::QueueConfig& config() const { return config_; }
  bool attracts(std::string_view topic) const;

  // Whether one more message of `record_bytes` fits the queue's limits
  // (QUEUE_FULL otherwise); acknowledged messages kept for replay give way first.
  Status admits(size_t record_bytes);
  void count_refusal() { ++stats_.refused_full; }
  // Appends (buffered until sync). After a failed append every later one of the batch fails too.
  // `maybe_duplicate`: a publisher's retransmission; every delivery of it is flagged redelivered.
  Status append(uint64_t timestamp_ns, std::string_view topic, std::span<const uint8_t> payload,
                bool maybe_duplicate = false);
  // Makes the batch durable; its error fails every append of the batch.
  Status sync();

  // A binding; false when this port already has `bind_id` here.
  bool bind(Consumer consumer);
  // The binding's unacknowledged messages go back to be delivered again (flagged). False when unknown.
  bool unbind(const Port* port, uint32_t bind_id);
  void unbind_all(const Port* port);
  bool bound(const Port* port, uint32_t bind_id) const { return find(port, bind_id) != nullptr; }
  // Acknowledges `seq` (cumulative: every seq up to it) delivered to that binding; how many.
  size_t ack(const Port* port, uint32_t bind_id, uint64_t seq, bool cumulative);
  // Gives `seq` back to be delivered again, flagged; false when that binding does not hold it.
  bool nack(const Port* port, uint32_t bind_id, uint64_t seq);

  // Hands what the consumers have room for to `sink`, read from the log.
  Status deliver(const Sink& sink);
  // Delivers again, flagged redelivered, every message held from `from` on
  // (the oldest held when it is older): for every binding, not only one.
  // The seq replay starts from; the next new message's when there is nothing to replay.
  uint64_t replay(uint64_t from);
  // The first message stored at or after the time (ns since the epoch), for replay.
  Result<uint64_t> seq_at_time(uint64_t timestamp_ns) { return log_->seq_at_time(timestamp_ns); }
  // Drops whole segments below the acknowledgement floor (what retention
  // does not keep), writes the floor down, and notes when the oldest
  // unacknowledged message was stored.
  void settle(uint64_t now_ns);

  uint64_t floor() const;
  uint64_t depth() const;  // messages stored and not acknowledged
  // When the oldest unacknowledged message was stored (ns since the epoch), as of the last settle(); 0 when none.
  uint64_t oldest_ns() const { return oldest_ns_; }
  uint64_t bytes() const { return log_->bytes(); }
  // Drops every message stored (delivered and unacknowledged ones too: their
  // acknowledgements are then ignored); how many. Whole segments go at the next settle().
  uint64_t purge();
  // Calls visit for up to `max` messages still held from `from` on, without delivering them.
  Status browse(uint64_t from, size_t max, const std::function<void(const store::Record&)>& visit);
  size_t consumers() const { return consumers_.size(); }
  const Stats& stats() const { return stats_; }

 private:
  Queue(config::QueueConfig config, std::string dir, std::unique_ptr<store::Log> log);
  Consumer* find(const Port* port, uint32_t bind_id);
  const Consumer* find(const Port* port, uint32_t bind_id) const;
  Consumer* find(uint64_t serial);
  Consumer* pick();  // the next consumer with room, round robin; null when none has room
  bool has_room() const;
  void hand(Consumer& to, const store::Record& record, bool redelivered, const Sink& sink);
  void release(uint64_t seq, uint64_t serial, bool redeliver);
  void give_back(uint64_t seq);
  uint64_t read_floor() const;
  void note_oldest(uint64_t floor);

  config::QueueConfig config_;
  std::string dir_;
  std::unique_ptr<store::Log> log_;
  int floor_fd_ = -1;
  uint64_t written_floor_ = 0;
  uint64_t oldest_ns_ = 0;
  uint64_t oldest_seq_ = 0;          // the message oldest_ns_ is of
  bool mqtt_ = false;
  uint64_t next_ = 1;                // where delivery of the log stands: the next seq to read
  // Seqs below it may have been delivered before (stored before the start,
  // or replayed): delivered flagged.
  uint64_t flag_below_ = 1;
  // seq -> consumer serial. After a replay some may be at or above next_:
  // delivery skips them as it passes.
  std::map<uint64_t, uint64_t> outstanding_;
  std::set<uint64_t> redeliver_;     // below next_ (at or above it, delivery reaches them anyway)
  std::vector<Consumer> consumers_;  // in bind order: the first is the exclusive queue's active one
  size_t next_consumer_ = 0;
  uint64_t batch_bytes_ = 0;
  Status batch_ = Ok{};              // the batch's first append error
  Stats stats_;
};

}  // namespace tw::queue
