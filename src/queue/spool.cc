#include "queue/spool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <unordered_map>

#include "base/affinity.h"
#include "base/clock.h"
#include "base/log.h"
#include "store/record.h"
#include "topic/topic.h"
#include "tickwire/wire/guaranteed.h"

namespace tw::queue {

// One turn's answers: a letter per port, frames appended in the order they were decided.
class Spool::Turn {
 public:
  void answer(const std::shared_ptr<Port>& port, uint64_t message_id, wire::Code code, std::string_view text) {
    Mailbox::Letter& l = letter(port);
    // Its exact size: the letter grows by what is appended (and zeroed first), once per publish.
    const wire::PublishAck answer{message_id, code, text};
    append(l, wire::publish_ack_size(answer), [&](std::span<uint8_t> out) { return wire::encode(out, answer); });
    ++l.answered;
  }
  void ack(const std::shared_ptr<Port>& port, uint32_t bind_id, wire::Code code, std::string_view text) {
    append(letter(port), wire::kHeaderSize + 4 + 2 + 2 + text.size(), [&](std::span<uint8_t> out) {
      return wire::encode(out, wire::Ack{bind_id, code, text});
    });
  }
  void deliver(const Consumer& to, const store::Record& r, bool redelivered) {
    const size_t size = wire::kDeliverFixedSize + r.topic.size() + r.payload.size();
    append(letter(to.port), size, [&](std::span<uint8_t> out) {
      return wire::encode(out, wire::Deliver{to.bind_id, r.seq, r.timestamp_ns, redelivered, r.topic, r.payload});
    });
  }
  // Hands the letters to their loops, one post (and one wake-up) per loop.
  void post() {
    std::unordered_map<Mailbox*, std::vector<Mailbox::Letter>> by_loop;
    for (Mailbox::Letter& l : letters_) by_loop[l.port->mailbox.get()].push_back(std::move(l));
    for (auto& [mailbox, letters] : by_loop) {
      if (mailbox != nullptr) mailbox->post(std::move(letters));
    }
  }

 private:
  Mailbox::Letter& letter(const std::shared_ptr<Port>& port) {
    auto [it, added] = index_.try_emplace(port.get(), letters_.size());
    if (added) letters_.push_back({port, {}, 0});
    return letters_[it->second];
  }
  template <typename Encode>
  static void append(Mailbox::Letter& l, size_t max_size, Encode&& encode) {
    const size_t at = l.frames.size();
    l.frames.resize(at + max_size);
    l.frames.resize(at + encode(std::span<uint8_t>(l.frames.data() + at, max_size)));
  }

  std::vector<Mailbox::Letter> letters_;
  std::unordered_map<const Port*, size_t> index_;
};

namespace {

// A full disk is told apart from other I/O errors by its errno's text in the store's error.
wire::Code refusal_for(const Error& error) {
  return error.message.find(std::strerror(ENOSPC)) != std::string::npos ? wire::Code::DiskFull
                                                                        : wire::Code::StoreFailed;
}

constexpr const char* kRuntimeQueues = "queues.list";

// <store.dir>/queues.list: the queues created at runtime (the admin API,
// durable subscriptions), one a line, fields separated by tabs: name, kind
// (shared, exclusive, durable), max_messages, max_bytes, retain_bytes,
// retain_age_s, then its subscriptions. Under its first line, kQueuesListV2;
// a list without it (written before durable subscriptions) has name,
// exclusive (0/1), max_messages, max_bytes, then the subscriptions.
constexpr std::string_view kQueuesListV2 = "# tickwire queues 2";

Result<std::vector<config::QueueConfig>> load_runtime_queues(const std::string& dir) {
  std::vector<config::QueueConfig> queues;
  std::ifstream in(dir + "/" + kRuntimeQueues);
  std::string line;
  bool v2 = false;
  for (int number = 1; std::getline(in, line); ++number) {
    if (number == 1 && line == kQueuesListV2) {
      v2 = true;
      continue;
    }
    std::vector<std::string> f;
    for (size_t at = 0;;) {
      const size_t tab = line.find('\t', at);
      f.push_back(line.substr(at, tab == std::string::npos ? std::string::npos : tab - at));
      if (tab == std::string::npos) break;
      at = tab + 1;
    }
    config::QueueConfig q;
    q.name = f[0];
    const size_t fixed = v2 ? 6 : 4;
    if (f.size() < fixed + 1 || !config::valid_queue_name(q.name)) {
      return Error{dir + "/" + kRuntimeQueues + ":" + std::to_string(number) + ": not a queue line"};
    }
    q.durable_subscription = f[1] == "durable";
    q.exclusive = f[1] == "1" || f[1] == "exclusive" || q.durable_subscription;
    q.max_messages = std::strtoull(f[2].c_str(), nullptr, 10);
    q.max_bytes = std::strtoull(f[3].c_str(), nullptr, 10);
    if (v2) {
      q.retain_bytes = std::strtoull(f[4].c_str(), nullptr, 10);
      q.retain_age_s = std::strtoull(f[5].c_str(), nullptr, 10);
    }
    q.subscriptions.assign(f.begin() + static_cast<long>(fixed), f.end());
    queues.push_back(std::move(q));
  }
  return queues;
}

void log_recovery(const std::string& name, const store::Recovery& r) {
  if (r.next_seq == r.first_seq) {
    TW_INFO("queue %s: empty (%zu segment%s)", name.c_str(), r.segments, r.segments == 1 ? "" : "s");
  } else {
    TW_INFO("queue %s: recovered %zu segment%s, messages %llu to %llu", name.c_str(), r.segments,
          r.segments == 1 ? "" : "s", static_cast<unsigned long long>(r.first_seq),
          static_cast<unsigned long long>(r.next_seq - 1));
  }
  if (r.cut) {
    TW_WARN("queue %s: recovery cut %llu bytes at offset %llu of the last segment (%s)", name.c_str(),
            static_cast<unsigned long long>(r.cut->bytes), static_cast<unsigned long long>(r.cut->at_offset),
            r.cut->why.c_str());
  }
}

// A crash leaves the old file or the new one, never a torn one.
void replace_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  if (bytes.empty()) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) TW_WARN("store: cannot remove %s: %s", path.c_str(), std::strerror(errno));
    return;
  }
  const std::string temporary = path + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  int error = fd < 0 ? errno : 0;
  if (error == 0 && ::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) error = errno ? errno : EIO;
  if (error == 0 && ::fdatasync(fd) != 0) error = errno;
  if (fd >= 0) ::close(fd);
  if (error == 0 && ::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    TW_WARN("store: cannot write %s: %s", path.c_str(), std::strerror(error));
    (void)::unlink(temporary.c_str());
  }
}

}  // namespace

Result<std::unique_ptr<Spool>> Spool::open(const config::BrokerConfig& config) {
  const config::StoreConfig& sc = config.store;
  if (::mkdir(sc.dir.c_str(), 0750) != 0 && errno != EEXIST) {
    return Error{"store.dir " + sc.dir + ": " + std::strerror(errno)};
  }
  const topic::Limits limits{config.limits.max_topic_length, config.limits.max_topic_depth};
  std::unique_ptr<Spool> spool(new Spool(sc.max_consumer_window));
  spool->dir_ = sc.dir;
  spool->log_options_ = store::LogOptions{.segment_bytes = sc.segment_bytes};
  spool->log_options_.remove = [reaper = &spool->reaper_](std::vector<std::string> paths) {
    reaper->remove(std::move(paths));
  };
  spool->topic_limits_ = limits;
  spool->configured_ = config.queues.size();
  auto runtime = load_runtime_queues(sc.dir);
  if (!runtime) return runtime.error();
  std::vector<config::QueueConfig> all = config.queues;
  for (config::QueueConfig& qc : *runtime) {
    const bool configured = std::any_of(config.queues.begin(), config.queues.end(),
                                        [&](const config::QueueConfig& c) { return c.name == qc.name; });
    if (configured) {
      TW_WARN("queue %s: created at runtime and now in the configuration too: the configuration's is used", qc.name.c_str());
    } else {
      all.push_back(std::move(qc));
    }
  }
  for (const config::QueueConfig& qc : all) {
    for (const std::string& pattern : qc.subscriptions) {
      if (auto e = topic::validate_pattern(pattern, limits); e != topic::Error::Ok) {
        return Error{"queue " + qc.name + ": subscription '" + pattern + "': " + topic::describe(e)};
      }
    }
    store::Recovery recovery;
    auto queue = Queue::open(qc, sc.dir, spool->log_options_, &recovery);
    if (!queue) return Error{"queue " + qc.name + ": " + queue.error().message};
    log_recovery(qc.name, recovery);
    spool->queues_.push_back(std::move(*queue));
  }
  // The MQTT stored sessions' queues: their subscriptions come with their sessions (Kind::MqttQueue).
  const std::string sessions = sc.dir + "/mqtt-sessions";
  if (::mkdir(sessions.c_str(), 0750) != 0 && errno != EEXIST) return Error{sessions + ": " + std::strerror(errno)};
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(sessions, error)) {
    if (!entry.is_directory() || entry.path().extension() != ".q") continue;
    if (spool->open_mqtt_queue("mqtt-sessions/" + entry.path().filename().string()) == nullptr) {
      return Error{"cannot open the MQTT session queue " + entry.path().string()};
    }
  }
  spool->refresh_stats();
  spool->thread_ = std::thread([s = spool.get()] { s->run(); });
  return spool;
}

Spool::~Spool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void Spool::submit(Command command) {
  {
    std::lock_guard lock(mutex_);
    submitted_.push_back(std::move(command));
  }
  wake_.notify_one();
}

void Spool::publish(std::shared_ptr<Port> port, uint64_t message_id, std::string topic, std::vector<uint8_t> payload,
                    bool retransmit) {
  submit({Kind::Publish, std::move(port), message_id, 0, 0, retransmit, std::move(topic), std::move(payload)});
}
void Spool::bind(std::shared_ptr<Port> port, uint32_t bind_id, uint32_t window, std::string queue, BindOptions options) {
  Command c{Kind::Bind, std::move(port), 0, bind_id, window, false, std::move(queue), {}};
  c.bind = std::move(options);
  submit(std::move(c));
}
void Spool::unbind(std::shared_ptr<Port> port, uint32_t bind_id, bool unsubscribe) {
  submit({Kind::Unbind, std::move(port), 0, bind_id, 0, unsubscribe, {}, {}});
}
void Spool::ack(std::shared_ptr<Port> port, uint32_t bind_id, uint64_t seq, bool cumulative) {
  submit({Kind::Ack, std::move(port), seq, bind_id, 0, cumulative, {}, {}});
}
void Spool::nack(std::shared_ptr<Port> port, uint32_t bind_id, uint64_t seq) {
  submit({Kind::Nack, std::move(port), seq, bind_id, 0, false, {}, {}});
}
void Spool::detach(std::shared_ptr<Port> port) { submit({Kind::Detach, std::move(port), 0, 0, 0, false, {}, {}}); }
Queue* Spool::open_mqtt_queue(const std::string& name) {
  for (auto& q : queues_) {
    if (q->name() == name) return q.get();
  }
  config::QueueConfig qc;
  qc.name = name;
  qc.exclusive = true;  // its session's connection; a successor gets it when the old one detaches
  store::Recovery recovery;
  auto queue = Queue::open(qc, dir_, log_options_, &recovery);
  if (!queue) {
    TW_ERROR("store: %s: %s", name.c_str(), queue.error().message.c_str());
    return nullptr;
  }
  if (recovery.cut) log_recovery(name, recovery);
  (*queue)->make_mqtt();
  queues_.push_back(std::move(*queue));
  return queues_.back().get();
}

void Spool::drop_mqtt_queue(const std::string& name) {
  auto it = std::find_if(queues_.begin(), queues_.end(), [&](const auto& q) { return q->mqtt() && q->name() == name; });
  if (it == queues_.end()) return;
  const std::string dir = (*it)->dir();
  queues_.erase(it);
  std::error_code error;
  std::filesystem::remove_all(dir, error);
  if (error) TW_WARN("store: cannot remove %s: %s", dir.c_str(), error.message().c_str());
}

void Spool::expire_mqtt_queues() {
  const uint64_t now = realtime_ns();
  std::vector<std::string> expired;
  for (auto& q : queues_) {
    if (q->mqtt() && q->mqtt_expires_ns != 0 && q->mqtt_expires_ns <= now) expired.push_back(q->name());
  }
  for (const std::string& name : expired) {
    TW_INFO("store: MQTT session %s expired: its queue and file deleted", name.c_str());
    drop_mqtt_queue(name);
    replace_file(dir_ + "/" + name.substr(0, name.size() - 2), {});
  }
}

void Spool::mqtt_queue(std::string name, std::vector<std::string> patterns, bool gone, uint64_t expires_ns) {
  Command c{Kind::MqttQueue, nullptr, expires_ns, 0, 0, gone, std::move(name), {}};
  c.patterns = std::move(patterns);
  submit(std::move(c));
}

void Spool::publish_mqtt(std::shared_ptr<Port> port, uint64_t message_id, std::string topic,
                         std::vector<uint8_t> header, std::vector<uint8_t> payload, bool retransmit) {
  Command c{Kind::Publish, std::move(port), message_id, 0, 0, retransmit, std::move(topic), std::move(payload)};
  c.mqtt = true;
  c.header = std::move(header);
  submit(std::move(c));
}

void Spool::bind_mqtt(std::shared_ptr<Port> port, uint32_t bind_id, uint32_t window, std::string queue) {
  Command c{Kind::Bind, std::move(port), 0, bind_id, window, false, std::move(queue), {}};
  c.mqtt = true;
  submit(std::move(c));
}

void Spool::write_file(std::string path, std::vector<uint8_t> bytes) {
  submit({Kind::File, nullptr, 0, 0, 0, false, std::move(path), std::move(bytes)});
}

Spool::Stats Spool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void Spool::run() {
  name_current_thread("tw-store");
  std::vector<Command> batch;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      // A stored MQTT session may expire meanwhile: its queue goes within a second.
      wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_ || !submitted_.empty(); });
      if (stopping_ && submitted_.empty()) return;  // everything answered
      batch.swap(submitted_);
    }
    expire_mqtt_queues();
    if (batch.empty()) {
      settle_all();  // what replay keeps ages out while the queues are quiet too
      continue;
    }
    commit(batch);
    batch.clear();
  }
}

namespace {

struct Pending {
  const std::shared_ptr<Port>* port;
  uint64_t message_id;
  std::vector<Queue*> queues;
  wire::Code code = wire::Code::Ok;  // a refusal decided before the sync (QUEUE_FULL)
  std::string text;
};

}  // namespace

void Spool::commit(std::vector<Command>& batch) {
  Turn turn;
  std::vector<Pending> pending;
  std::vector<Queue*> appended;
  std::vector<Command*> calls;
  std::vector<Unsubscribe> unsubscribes;
  Stats counts;
  const uint64_t now = realtime_ns();
  for (Command& c : batch) {
    switch (c.kind) {
      case Kind::Publish: {
        Pending p{&c.port, c.id, {}};
        for (auto& q : queues_) {
          if ((c.mqtt || !q->mqtt()) && q->attracts(c.name)) p.queues.push_back(q.get());
        }
        for (Queue* q : p.queues) {
          const size_t size = store::record_size(c.name, c.payload.size() + (q->mqtt() ? c.header.size() : 0));
          if (Status room = q->admits(size); !room) {
            q->count_refusal();
            p.code = wire::Code::QueueFull;
            p.text = room.error().message;
            break;
          }
        }
        if (p.code == wire::Code::Ok) {
          std::vector<uint8_t> prefixed;  // an MQTT session queue's record: the header, then the payload
          if (c.mqtt) {
            prefixed = c.header;
            prefixed.insert(prefixed.end(), c.payload.begin(), c.payload.end());
          }
          for (Queue* q : p.queues) {
            // An error fails the queue's whole batch at its sync.
            (void)q->append(now, c.name, q->mqtt() ? prefixed : c.payload, c.flag);
            if (std::find(appended.begin(), appended.end(), q) == appended.end()) appended.push_back(q);
          }
        }
        pending.push_back(std::move(p));
        break;
      }
      case Kind::Bind:
        bind_one(turn, c);
        break;
      case Kind::Unbind:
        unbind_one(turn, c, unsubscribes);
        break;
      case Kind::Ack:
      case Kind::Nack: {
        // An ack for a binding that has gone (unbound meanwhile) is dropped: its messages were given back.
        Queue* q = holder(c.port.get(), c.bind_id);
        if (q == nullptr) break;
        if (c.kind == Kind::Ack) (void)q->ack(c.port.get(), c.bind_id, c.id, c.flag);
        else (void)q->nack(c.port.get(), c.bind_id, c.id);
        break;
      }
      case Kind::Detach:
        for (auto& q : queues_) q->unbind_all(c.port.get());
        break;
      case Kind::Call:  // after the batch's answers and deliveries: it may remove a queue they use
        calls.push_back(&c);
        break;
      case Kind::File:
        replace_file(c.name, c.payload);
        break;
      case Kind::MqttQueue:
        if (c.flag) {
          // Appends of this batch to it are forgotten (nothing to sync); its publishes are answered OK.
          std::erase_if(appended, [&](Queue* q) { return q->mqtt() && q->name() == c.name; });
          drop_mqtt_queue(c.name);
        } else if (Queue* q = open_mqtt_queue(c.name); q != nullptr) {
          q->set_subscriptions(std::move(c.patterns));
          q->mqtt_expires_ns = c.id;
        }
        break;
    }
  }
  // Group commit: one sync per queue appended to, all at once, then the answers.
  std::unordered_map<Queue*, Error> failed;
  std::vector<Status> synced(appended.size(), Ok{});
  const uint64_t start = monotonic_ns();
  sync_crew_.run(appended.size(), [&](size_t i) { synced[i] = appended[i]->sync(); });
  const uint64_t took = monotonic_ns() - start;
  for (size_t i = 0; i < appended.size(); ++i) {
    if (synced[i]) continue;
    TW_WARN("queue %s: %s", appended[i]->name().c_str(), synced[i].error().message.c_str());
    failed.emplace(appended[i], synced[i].error());
  }
  const bool fenced = may_acknowledge_ && !may_acknowledge_();
  for (Pending& p : pending) {
    if (p.code == wire::Code::Ok && fenced) {
      p.code = wire::Code::NotPrimary;
      p.text = "not acknowledged: this broker's HA term may have ended; publish to the primary";
    }
    if (p.code == wire::Code::Ok) {
      for (Queue* q : p.queues) {
        if (auto it = failed.find(q); it != failed.end()) {
          p.code = refusal_for(it->second);
          p.text = "not stored: " + it->second.message;
          break;
        }
      }
    }
    turn.answer(*p.port, p.message_id, p.code, p.text);
    if (p.code == wire::Code::Ok) {
      ++counts.publishes;
      counts.unrouted += p.queues.empty();
    } else {
      ++counts.refused;
      counts.refused_full += p.code == wire::Code::QueueFull;
      counts.refused_disk += p.code != wire::Code::QueueFull && p.code != wire::Code::NotPrimary;
    }
  }
  for (const Unsubscribe& u : unsubscribes) unsubscribe(turn, u);  // no answer above names their queues now
  for (auto& q : queues_) {
    Status read = q->deliver([&](const Consumer& to, const store::Record& r, bool again) { turn.deliver(to, r, again); });
    if (!read) TW_ERROR("queue %s: cannot read for delivery: %s", q->name().c_str(), read.error().message.c_str());
    q->settle(now);
  }
  count_batch(counts, appended.size(), took);  // before the answers: whoever sees an answer sees it counted
  turn.post();
  for (Command* c : calls) c->call();
}

Queue* Spool::holder(const Port* port, uint32_t bind_id) {
  for (auto& q : queues_) {
    if (q->bound(port, bind_id)) return q.get();
  }
  return nullptr;
}

void Spool::bind_one(Turn& turn, const Command& c) {
  if (c.bind_id == 0 || holder(c.port.get(), c.bind_id) != nullptr) {
    return turn.ack(c.port, c.bind_id, wire::Code::MalformedFrame, "bind id 0 or already bound on this connection");
  }
  Queue* q = nullptr;
  if (!c.bind.topic.empty()) {
    q = durable_subscription(turn, c);
    if (q == nullptr) return;  // refused, answered
  } else {
    q = find_queue(c.name);
    if (q != nullptr && q->mqtt() != c.mqtt) q = nullptr;  // a session's queue is its own
    if (q == nullptr) return turn.ack(c.port, c.bind_id, wire::Code::NotFound, "no queue named '" + c.name + "'");
  }
  std::string replaying;
  if (c.bind.replay != wire::ReplayFrom::None) {
    Result<uint64_t> from = c.bind.replay == wire::ReplayFrom::Seq ? Result<uint64_t>(c.bind.from)
                                                                    : q->seq_at_time(c.bind.from);
    if (!from) return turn.ack(c.port, c.bind_id, wire::Code::StoreFailed, "cannot replay: " + from.error().message);
    const uint64_t start = q->replay(*from);
    replaying = "replay from seq " + std::to_string(start);
    TW_INFO("queue %s: %s (asked for %s %llu)", q->name().c_str(), replaying.c_str(),
            c.bind.replay == wire::ReplayFrom::Seq ? "seq" : "time ns", static_cast<unsigned long long>(c.bind.from));
  }
  const uint32_t window = c.window == 0 ? max_window_ : std::min(c.window, max_window_);
  q->bind({next_serial_++, c.port, c.bind_id, window, 0});
  turn.ack(c.port, c.bind_id, wire::Code::Ok, replaying);
}

Queue* Spool::durable_subscription(Turn& turn, const Command& c) {
  const std::string& topic = c.bind.topic;
  auto refuse = [&](wire::Code code, const std::string& text) -> Queue* {
    turn.ack(c.port, c.bind_id, code, text);
    return nullptr;
  };
  if (!config::valid_queue_name(c.name)) {
    return refuse(wire::Code::InvalidTopic, "durable subscription name '" + c.name +
                                                "': expected 1..128 letters, digits, '-', '_' or '.'");
  }
  Queue* q = find_queue(c.name);
  if (q == nullptr) {
    if (std::filesystem::exists(dir_ + "/" + c.name)) {
      return refuse(wire::Code::EndpointMismatch, "'" + c.name + "': its directory exists under store.dir (a queue deleted from the configuration?)");
    }
    config::QueueConfig qc;
    qc.name = c.name;
    qc.subscriptions = {topic};
    qc.exclusive = qc.durable_subscription = true;
    if (Status added = add_runtime_queue(qc); !added) {
      return refuse(wire::Code::StoreFailed, "durable subscription " + c.name + ": " + added.error().message);
    }
    TW_INFO("durable subscription %s: created, topic %s", c.name.c_str(), topic.c_str());
    return queues_.back().get();
  }
  if (q->mqtt() || !q->durable_subscription()) {
    return refuse(wire::Code::EndpointMismatch, "'" + c.name + "' is a queue, not a durable subscription");
  }
  const std::vector<std::string>& held = q->config().subscriptions;
  if (held.size() == 1 && held[0] == topic) return q;
  if (q->consumers() > 0) {
    return refuse(wire::Code::EndpointMismatch, "durable subscription '" + c.name + "' is bound with topic '" +
                                                    (held.empty() ? "" : held[0]) + "'");
  }
  // As JMS does: a durable subscription bound with another topic is a new one; what it held is dropped.
  const std::vector<std::string> before = held;
  q->set_subscriptions({topic});
  if (Status saved = save_runtime_queues(); !saved) {
    q->set_subscriptions(before);
    return refuse(wire::Code::StoreFailed, saved.error().message);
  }
  const uint64_t dropped = q->purge();
  TW_INFO("durable subscription %s: topic %s -> %s, %llu messages dropped", c.name.c_str(),
          before.empty() ? "" : before[0].c_str(), topic.c_str(), static_cast<unsigned long long>(dropped));
  return q;
}

void Spool::unbind_one(Turn& turn, const Command& c, std::vector<Unsubscribe>& unsubscribes) {
  Queue* q = holder(c.port.get(), c.bind_id);
  if (q == nullptr) return turn.ack(c.port, c.bind_id, wire::Code::NotFound, "not bound");
  if (c.flag && !q->durable_subscription()) {
    return turn.ack(c.port, c.bind_id, wire::Code::EndpointMismatch,
                    "'" + q->name() + "' is a queue, not a durable subscription: not unbound");
  }
  q->unbind(c.port.get(), c.bind_id);
  if (c.flag) return unsubscribes.push_back({&c, q});
  turn.ack(c.port, c.bind_id, wire::Code::Ok, {});
}

// Two UNBINDs of one batch may unsubscribe the same durable subscription: the second finds it gone.
void Spool::unsubscribe(Turn& turn, const Unsubscribe& u) {
  const Command& c = *u.command;
  auto it = std::find_if(queues_.begin(), queues_.end(), [&](const auto& q) { return q.get() == u.queue; });
  if (it == queues_.end()) return turn.ack(c.port, c.bind_id, wire::Code::Ok, {});
  if (u.queue->consumers() > 0) {
    return turn.ack(c.port, c.bind_id, wire::Code::EndpointMismatch,
                    "unbound, but durable subscription '" + u.queue->name() + "' has other consumers: not deleted");
  }
  const std::string name = u.queue->name();
  if (Status removed = remove_queue(static_cast<size_t>(it - queues_.begin())); !removed) {
    return turn.ack(c.port, c.bind_id, wire::Code::StoreFailed, "unbound, not deleted: " + removed.error().message);
  }
  TW_INFO("durable subscription %s: deleted (unsubscribed)", name.c_str());
  turn.ack(c.port, c.bind_id, wire::Code::Ok, {});
}

void Spool::settle_all() {
  const uint64_t now = realtime_ns();
  for (auto& q : queues_) q->settle(now);
}

void Spool::count_batch(const Stats& counts, size_t syncs, uint64_t took) {
  std::lock_guard lock(mutex_);
  stats_.publishes += counts.publishes;
  stats_.refused += counts.refused;
  stats_.refused_full += counts.refused_full;
  stats_.refused_disk += counts.refused_disk;
  stats_.unrouted += counts.unrouted;
  ++stats_.batches;
  stats_.syncs += syncs;
  stats_.max_sync_ns = std::max(stats_.max_sync_ns, took);
  if (syncs != 0) {
    stats_.sync_ns += took;
    const auto* bound = std::lower_bound(kSyncBucketsNs.begin(), kSyncBucketsNs.end(), took);
    ++stats_.sync_buckets[static_cast<size_t>(bound - kSyncBucketsNs.begin())];
  }
  refresh_queue_stats();
}

void Spool::refresh_stats() {
  std::lock_guard lock(mutex_);
  refresh_queue_stats();
}

void Spool::refresh_queue_stats() {
  stats_.queues.clear();
  for (size_t i = 0; i < queues_.size(); ++i) {
    const Queue& q = *queues_[i];
    stats_.queues.push_back({q.name(), q.depth(), q.oldest_ns(), q.bytes(), static_cast<uint32_t>(q.consumers()),
                             q.stats(), q.config(), i >= configured_});
  }
}

Status Spool::on_store_thread(const std::function<Status()>& fn) {
  auto done = std::make_shared<std::promise<Status>>();
  auto answer = done->get_future();
  Command c;
  c.kind = Kind::Call;
  // The stats show what the call changed before its caller hears back.
  c.call = [this, done, fn] {
    Status status = fn();
    refresh_stats();
    done->set_value(std::move(status));
  };
  {
    // Checked under the lock the thread stops under: a call it accepts is answered before it ends.
    std::lock_guard lock(mutex_);
    if (stopping_) return Error{"the broker is stopping"};
    submitted_.push_back(std::move(c));
  }
  wake_.notify_one();
  return answer.get();
}

Queue* Spool::find_queue(std::string_view name) {
  for (auto& q : queues_) {
    if (q->name() == name) return q.get();
  }
  return nullptr;
}

// Written aside, synced and renamed: a crash leaves the old list or the new one.
Status Spool::save_runtime_queues() const {
  const std::string path = dir_ + "/" + kRuntimeQueues, staged = path + ".new";
  std::string text = std::string(kQueuesListV2) + "\n";
  for (size_t i = configured_; i < queues_.size(); ++i) {
    if (queues_[i]->mqtt()) continue;  // an MQTT session's queue is listed by its session file
    const config::QueueConfig& q = queues_[i]->config();
    const char* kind = q.durable_subscription ? "durable" : q.exclusive ? "exclusive" : "shared";
    text += q.name + "\t" + kind + "\t" + std::to_string(q.max_messages) + "\t" + std::to_string(q.max_bytes) +
            "\t" + std::to_string(q.retain_bytes) + "\t" + std::to_string(q.retain_age_s);
    for (const std::string& s : q.subscriptions) text += "\t" + s;
    text += "\n";
  }
  const int fd = ::open(staged.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) return Error{"cannot write " + staged + ": " + std::strerror(errno)};
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fdatasync(fd) == 0;
  ::close(fd);
  if (!written || ::rename(staged.c_str(), path.c_str()) != 0) return Error{"cannot write " + path + ": " + std::strerror(errno)};
  return Ok{};
}

Status Spool::create_queue(const config::QueueConfig& qc) {
  if (!config::valid_queue_name(qc.name)) {
    return Error{"name '" + qc.name + "': expected 1..128 letters, digits, '-', '_' or '.'"};
  }
  if (qc.subscriptions.empty()) return Error{"queue " + qc.name + " needs at least one subscription"};
  if (qc.max_messages == 0 || qc.max_bytes == 0) return Error{"max_messages and max_bytes must be > 0"};
  for (const std::string& pattern : qc.subscriptions) {
    if (pattern.find_first_of("\t\n") != std::string::npos) return Error{"subscription '" + pattern + "': a tab or a newline"};
    if (auto e = topic::validate_pattern(pattern, topic_limits_); e != topic::Error::Ok) {
      return Error{"subscription '" + pattern + "': " + topic::describe(e)};
    }
  }
  return on_store_thread([&]() -> Status {
    if (find_queue(qc.name) != nullptr) return Error{"queue " + qc.name + " exists"};
    if (std::filesystem::exists(dir_ + "/" + qc.name)) {
      return Error{"queue " + qc.name + ": its directory " + dir_ + "/" + qc.name + " exists (a queue deleted from the configuration?)"};
    }
    if (Status added = add_runtime_queue(qc); !added) return Error{"queue " + qc.name + ": " + added.error().message};
    TW_INFO("queue %s: created (admin API)", qc.name.c_str());
    return Ok{};
  });
}

// A new queue kept across restarts: opened, then listed; not listed, it is gone again, directory and all.
Status Spool::add_runtime_queue(const config::QueueConfig& qc) {
  auto queue = Queue::open(qc, dir_, log_options_, nullptr);
  if (!queue) return queue.error();
  queues_.push_back(std::move(*queue));
  if (Status saved = save_runtime_queues(); !saved) {
    std::filesystem::remove_all(queues_.back()->dir());
    queues_.pop_back();
    return saved;
  }
  return Ok{};
}

Status Spool::delete_queue(const std::string& name) {
  return on_store_thread([&]() -> Status {
    for (size_t i = 0; i < queues_.size(); ++i) {
      Queue& q = *queues_[i];
      if (q.name() != name) continue;
      if (i < configured_) return Error{"queue " + name + " is in the configuration: remove it there"};
      if (q.mqtt()) return Error{"queue " + name + " is an MQTT stored session's: it ends with its session"};
      if (q.consumers() > 0) return Error{"queue " + name + " has " + std::to_string(q.consumers()) + " consumers bound"};
      if (Status removed = remove_queue(i); !removed) return removed;
      TW_INFO("queue %s: deleted (admin API)", name.c_str());
      return Ok{};
    }
    return Error{"no queue named '" + name + "'"};
  });
}

Status Spool::remove_queue(size_t index) {
  const std::string dir = queues_[index]->dir();
  auto held = std::move(queues_[index]);
  queues_.erase(queues_.begin() + static_cast<long>(index));
  if (Status saved = save_runtime_queues(); !saved) {
    queues_.insert(queues_.begin() + static_cast<long>(index), std::move(held));
    return saved;
  }
  held.reset();  // closes its files
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return Ok{};
}

Result<uint64_t> Spool::purge_queue(const std::string& name) {
  uint64_t dropped = 0;
  Status done = on_store_thread([&]() -> Status {
    Queue* q = find_queue(name);
    if (q == nullptr) return Error{"no queue named '" + name + "'"};
    dropped = q->purge();
    q->settle(realtime_ns());
    TW_INFO("queue %s: purged %llu messages (admin API)", name.c_str(), static_cast<unsigned long long>(dropped));
    return Ok{};
  });
  if (!done) return done.error();
  return dropped;
}

Result<std::vector<Spool::Browsed>> Spool::browse_queue(const std::string& name, uint64_t from, size_t max) {
  std::vector<Browsed> out;
  Status done = on_store_thread([&]() -> Status {
    Queue* q = find_queue(name);
    if (q == nullptr) return Error{"no queue named '" + name + "'"};
    return q->browse(from, max, [&](const store::Record& r) {
      out.push_back({r.seq, r.timestamp_ns, std::string(r.topic), std::string(r.payload.begin(), r.payload.end())});
    });
  });
  if (!done) return done.error();
  return out;
}

}  // namespace tw::queue
