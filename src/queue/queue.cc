#include "queue/queue.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "base/log.h"
#include "topic/topic.h"

namespace tw::queue {

Queue::Queue(config::QueueConfig config, std::string dir, std::unique_ptr<store::Log> log)
    : config_(std::move(config)), dir_(std::move(dir)), log_(std::move(log)) {}

Queue::~Queue() {
  if (floor_fd_ >= 0) ::close(floor_fd_);
}

Result<std::unique_ptr<Queue>> Queue::open(const config::QueueConfig& config, const std::string& store_dir,
                                           const store::LogOptions& options, store::Recovery* recovery) {
  const std::string dir = store_dir + "/" + config.name;
  auto log = store::Log::open(dir, options, recovery);
  if (!log) return log.error();
  std::unique_ptr<Queue> q(new Queue(config, dir, std::move(*log)));
  q->floor_fd_ = ::open((dir + "/floor").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640);
  if (q->floor_fd_ < 0) return Error{"cannot open " + dir + "/floor: " + std::strerror(errno)};
  q->written_floor_ = q->read_floor();
  q->next_ = std::max(q->written_floor_, q->log_->first_seq());
  q->flag_below_ = q->log_->next_seq();
  return q;
}

uint64_t Queue::read_floor() const {
  uint64_t floor = 0;
  if (::pread(floor_fd_, &floor, sizeof floor, 0) != sizeof floor) return 0;
  return floor;
}

bool Queue::attracts(std::string_view topic) const {
  for (const std::string& pattern : config_.subscriptions) {
    if (topic::matches(pattern, topic)) return true;
  }
  return false;
}

Status Queue::admits(size_t record_bytes) {
  if (depth() + 1 > config_.max_messages) {
    return Error{"queue " + config_.name + " is full: " + std::to_string(config_.max_messages) + " messages (max_messages)"};
  }
  auto over = [&] { return log_->bytes() + batch_bytes_ + record_bytes > config_.max_bytes; };
  if (over() && config_.retain_bytes != 0) log_->drop_before(floor());  // replay's segments give way
  if (over()) {
    return Error{"queue " + config_.name + " is full: " + std::to_string(config_.max_bytes) + " bytes on disk (max_bytes)"};
  }
  return Ok{};
}

Status Queue::append(uint64_t timestamp_ns, std::string_view topic, std::span<const uint8_t> payload,
                     bool maybe_duplicate) {
  if (!batch_) return batch_;
  auto seq = log_->append(timestamp_ns, maybe_duplicate ? kMaybeDuplicate : 0, topic, payload);
  if (!seq) {
    batch_ = seq.error();
    return batch_;
  }
  batch_bytes_ += store::record_size(topic, payload.size());
  ++stats_.enqueued;
  return Ok{};
}

// A batch with a failed append fails whole, as the Committer's does: a
// publisher told "not stored" may send again, one told "stored" must never lose it.
Status Queue::sync() {
  Status synced = log_->sync();
  Status batch = std::exchange(batch_, Ok{});
  batch_bytes_ = 0;
  return batch ? synced : batch;
}

Consumer* Queue::find(const Port* port, uint32_t bind_id) {
  for (Consumer& c : consumers_) {
    if (c.port.get() == port && c.bind_id == bind_id) return &c;
  }
  return nullptr;
}

const Consumer* Queue::find(const Port* port, uint32_t bind_id) const {
  return const_cast<Queue*>(this)->find(port, bind_id);
}

Consumer* Queue::find(uint64_t serial) {
  for (Consumer& c : consumers_) {
    if (c.serial == serial) return &c;
  }
  return nullptr;
}

bool Queue::bind(Consumer consumer) {
  if (find(consumer.port.get(), consumer.bind_id) != nullptr) return false;
  consumer.in_flight = 0;
  consumers_.push_back(std::move(consumer));
  return true;
}

bool Queue::unbind(const Port* port, uint32_t bind_id) {
  Consumer* c = find(port, bind_id);
  if (c == nullptr) return false;
  const uint64_t serial = c->serial;
  for (auto it = outstanding_.begin(); it != outstanding_.end();) {
    if (it->second == serial) {
      give_back(it->first);
      it = outstanding_.erase(it);
    } else {
      ++it;
    }
  }
  consumers_.erase(consumers_.begin() + (c - consumers_.data()));
  return true;
}

// A seq at or above next_ (a replay went back past it) is delivered again where delivery stands.
void Queue::give_back(uint64_t seq) {
  if (seq < next_) redeliver_.insert(seq);
}

void Queue::unbind_all(const Port* port) {
  for (size_t i = consumers_.size(); i-- > 0;) {
    if (consumers_[i].port.get() == port) unbind(port, consumers_[i].bind_id);
  }
}

void Queue::release(uint64_t seq, uint64_t serial, bool redeliver) {
  outstanding_.erase(seq);
  if (redeliver) give_back(seq);
  if (Consumer* c = find(serial); c != nullptr && c->in_flight > 0) --c->in_flight;
}

size_t Queue::ack(const Port* port, uint32_t bind_id, uint64_t seq, bool cumulative) {
  const Consumer* c = find(port, bind_id);
  if (c == nullptr) return 0;
  const uint64_t serial = c->serial;
  std::vector<uint64_t> acked;
  if (cumulative) {
    for (auto it = outstanding_.begin(); it != outstanding_.end() && it->first <= seq; ++it) {
      if (it->second == serial) acked.push_back(it->first);
    }
  } else if (auto it = outstanding_.find(seq); it != outstanding_.end() && it->second == serial) {
    acked.push_back(seq);
  }
  for (uint64_t s : acked) release(s, serial, false);
  stats_.acknowledged += acked.size();
  return acked.size();
}

bool Queue::nack(const Port* port, uint32_t bind_id, uint64_t seq) {
  const Consumer* c = find(port, bind_id);
  auto it = outstanding_.find(seq);
  if (c == nullptr || it == outstanding_.end() || it->second != c->serial) return false;
  release(seq, c->serial, true);
  return true;
}

bool Queue::has_room() const {
  if (config_.exclusive) return !consumers_.empty() && consumers_.front().in_flight < consumers_.front().window;
  return std::any_of(consumers_.begin(), consumers_.end(), [](const Consumer& c) { return c.in_flight < c.window; });
}

Consumer* Queue::pick() {
  if (consumers_.empty()) return nullptr;
  if (config_.exclusive) {
    Consumer& active = consumers_.front();
    return active.in_flight < active.window ? &active : nullptr;
  }
  for (size_t i = 0; i < consumers_.size(); ++i) {
    Consumer& c = consumers_[(next_consumer_ + i) % consumers_.size()];
    if (c.in_flight < c.window) {
      next_consumer_ = (next_consumer_ + i + 1) % consumers_.size();
      return &c;
    }
  }
  return nullptr;
}

void Queue::hand(Consumer& to, const store::Record& record, bool redelivered, const Sink& sink) {
  outstanding_[record.seq] = to.serial;
  ++to.in_flight;
  ++stats_.delivered;
  stats_.redelivered += redelivered;
  sink(to, record, redelivered);
}

// Redeliveries first (each read on its own: they are few), then new messages
// in one read from where delivery stands, up to what is durable.
Status Queue::deliver(const Sink& sink) {
  while (!redeliver_.empty()) {
    Consumer* to = pick();
    if (to == nullptr) return Ok{};
    const uint64_t seq = *redeliver_.begin();
    redeliver_.erase(redeliver_.begin());
    Status read = log_->read(seq, [&](const store::Record& r) {
      if (r.seq == seq) hand(*to, r, true, sink);
      return false;
    });
    if (!read) return read;
  }
  const uint64_t end = log_->durable_seq();
  if (next_ >= end || !has_room()) return Ok{};
  return log_->read(next_, [&](const store::Record& r) {
    if (r.seq >= end) return false;
    const bool ahead = !outstanding_.empty() && outstanding_.rbegin()->first >= r.seq;  // only after a replay
    if (ahead && outstanding_.contains(r.seq)) {  // replayed while a binding still holds it
      next_ = r.seq + 1;
      return true;
    }
    Consumer* to = pick();
    if (to == nullptr) return false;
    next_ = r.seq + 1;
    hand(*to, r, r.seq < flag_below_ || (r.flags & kMaybeDuplicate) != 0, sink);
    return true;
  });
}

uint64_t Queue::replay(uint64_t from) {
  const uint64_t start = std::max(from, log_->first_seq());
  if (start >= next_) return next_;
  flag_below_ = std::max(flag_below_, next_);
  next_ = start;
  redeliver_.erase(redeliver_.lower_bound(start), redeliver_.end());
  return start;
}

uint64_t Queue::purge() {
  const uint64_t dropped = depth();
  next_ = log_->next_seq();
  outstanding_.clear();
  redeliver_.clear();
  for (Consumer& c : consumers_) c.in_flight = 0;
  return dropped;
}

Status Queue::browse(uint64_t from, size_t max, const std::function<void(const store::Record&)>& visit) {
  size_t seen = 0;
  if (max == 0) return Ok{};
  return log_->read(std::max(from, floor()), [&](const store::Record& r) {
    visit(r);
    return ++seen < max;
  });
}

uint64_t Queue::floor() const {
  uint64_t floor = next_;
  if (!outstanding_.empty()) floor = std::min(floor, outstanding_.begin()->first);
  if (!redeliver_.empty()) floor = std::min(floor, *redeliver_.begin());
  return floor;
}

// Outstanding seqs at or above next_ (a replay's) are counted once, with what is yet to deliver.
uint64_t Queue::depth() const {
  const auto ahead = static_cast<uint64_t>(std::distance(outstanding_.lower_bound(next_), outstanding_.end()));
  return (log_->next_seq() - next_) + (outstanding_.size() - ahead) + redeliver_.size();
}

void Queue::settle(uint64_t now_ns) {
  const uint64_t f = floor();
  note_oldest(f);
  if (config_.retain_bytes != 0) {
    // Kept segments age out, or the floor moved: checked every turn, one comparison when nothing goes.
    log_->drop_before(f, {.max_bytes = config_.retain_bytes, .max_age_ns = config_.retain_age_s * 1'000'000'000ull},
                      now_ns);
  } else if (f != written_floor_) {
    log_->drop_before(f);
  }
  if (f != written_floor_ && ::pwrite(floor_fd_, &f, sizeof f, 0) == sizeof f) written_floor_ = f;
}

// One read of one record when the floor moved (or the queue stopped being empty), none otherwise.
void Queue::note_oldest(uint64_t floor) {
  if (floor >= log_->durable_seq()) {
    oldest_ns_ = oldest_seq_ = 0;
    return;
  }
  if (floor == oldest_seq_) return;
  (void)log_->read(floor, [&](const store::Record& r) {
    oldest_seq_ = r.seq;
    oldest_ns_ = r.timestamp_ns;
    return false;
  });
}

}  // namespace tw::queue
