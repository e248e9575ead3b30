#include "store/log.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tw::store {
namespace {

// The base sequence numbers of the directory's segment files, in order; stale staged indexes are removed.
Result<std::vector<uint64_t>> list_segments(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return Error{"cannot open " + dir + ": " + std::strerror(errno)};
  std::vector<uint64_t> bases;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name.ends_with(".index.new")) ::unlink((dir + "/" + std::string(name)).c_str());
    if (name.size() != 24 || !name.ends_with(".log")) continue;
    uint64_t base = 0;
    bool digits = true;
    for (char c : name.substr(0, 20)) {
      digits = digits && c >= '0' && c <= '9';
      base = base * 10 + static_cast<uint64_t>(c - '0');
    }
    if (digits) bases.push_back(base);
  }
  ::closedir(d);
  std::sort(bases.begin(), bases.end());
  return bases;
}

}  // namespace

Log::Log(std::string dir, const LogOptions& options) : dir_(std::move(dir)), options_(options) {}

Log::~Log() {
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

Result<std::unique_ptr<Log>> Log::open(const std::string& dir, const LogOptions& options, Recovery* recovery) {
  std::unique_ptr<Log> log(new Log(dir, options));
  if (::mkdir(dir.c_str(), 0750) != 0 && errno != EEXIST) return Error{"cannot create " + dir + ": " + std::strerror(errno)};
  log->dir_fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (log->dir_fd_ < 0) return Error{"cannot open " + dir + ": " + std::strerror(errno)};
  auto bases = list_segments(dir);
  if (!bases) return bases.error();
  Cut cut;
  for (size_t i = 0; i < bases->size(); ++i) {
    const bool last = i + 1 == bases->size();
    auto segment = Segment::open(dir, (*bases)[i], last, options.index_interval, &cut);
    if (!segment) return segment.error();
    if (!log->segments_.empty() && log->segments_.back()->next_seq() != (*segment)->base_seq()) {
      return Error{Segment::log_name(dir, (*segment)->base_seq()) + ": records " +
                   std::to_string(log->segments_.back()->next_seq()) + " to " +
                   std::to_string((*segment)->base_seq() - 1) + " are missing"};
    }
    log->segments_.push_back(std::move(*segment));
  }
  if (log->segments_.empty()) {
    auto first = Segment::create(dir, 1, options.index_interval);
    if (!first) return first.error();
    log->segments_.push_back(std::move(*first));
    if (::fsync(log->dir_fd_) != 0) return Error{"cannot sync " + dir + ": " + std::strerror(errno)};
  }
  const Segment& last = *log->segments_.back();
  log->next_seq_ = log->durable_seq_ = last.next_seq();
  log->last_timestamp_ns_ = last.last_timestamp_ns();
  if (recovery) {
    *recovery = {log->segments_.size(), log->first_seq(), log->next_seq_, std::nullopt};
    if (cut.bytes != 0 || !cut.why.empty()) recovery->cut = cut;
  }
  return log;
}

Status Log::check(std::string_view topic, size_t payload_size) {
  if (topic.size() > kMaxTopic) return Error{"topic longer than 65535 bytes"};
  if (record_size(topic, payload_size) > UINT32_MAX) return Error{"record larger than 4 GiB"};
  return Ok{};
}

Result<uint64_t> Log::append(uint64_t timestamp_ns, uint8_t flags, std::string_view topic,
                             std::span<const uint8_t> payload) {
  if (Status valid = check(topic, payload.size()); !valid) return valid.error();
  const uint64_t size = record_size(topic, payload.size());
  const Segment& active = *segments_.back();
  if (!active.empty() || !pending_.empty()) {
    if (active.bytes() + pending_.size() + size > options_.segment_bytes) {
      if (Status rolled = roll(); !rolled) return rolled.error();
    }
  }
  timestamp_ns = std::max(timestamp_ns, last_timestamp_ns_);
  const uint64_t seq = next_seq_;
  const size_t at = pending_.size();
  pending_.resize(at + size);
  encode_record({pending_.data() + at, size}, {seq, timestamp_ns, flags, topic, payload});
  pending_starts_.push_back({seq, at, timestamp_ns});
  ++next_seq_;
  last_timestamp_ns_ = timestamp_ns;
  return seq;
}

Status Log::write_pending() {
  if (pending_.empty()) return Ok{};
  Status written = segments_.back()->append(pending_, pending_starts_);
  if (!written) {
    next_seq_ = segments_.back()->next_seq();
    last_timestamp_ns_ = segments_.back()->last_timestamp_ns();
  }
  pending_.clear();
  pending_starts_.clear();
  return written;
}

Status Log::sync() {
  if (Status written = write_pending(); !written) return written;
  if (Status synced = segments_.back()->sync(); !synced) return synced;
  durable_seq_ = next_seq_;
  return Ok{};
}

// The last segment is sealed (synced, its index written) before the next
// exists, and the directory is synced so that the new file's name is durable too.
Status Log::roll() {
  if (Status written = write_pending(); !written) return written;
  Segment& last = *segments_.back();
  if (Status sealed = last.seal(); !sealed) return sealed;
  durable_seq_ = next_seq_;
  auto next = Segment::create(dir_, next_seq_, options_.index_interval);
  if (!next) return next.error();
  segments_.push_back(std::move(*next));
  if (::fsync(dir_fd_) != 0) return Error{"cannot sync " + dir_ + ": " + std::strerror(errno)};
  return Ok{};
}

uint64_t Log::first_seq() const {
  for (const auto& s : segments_) {
    if (!s->empty()) return s->base_seq();
  }
  return segments_.back()->base_seq();
}

uint64_t Log::bytes() const {
  uint64_t total = 0;
  for (const auto& s : segments_) total += s->bytes();
  return total;
}

Status Log::read(uint64_t from, const std::function<bool(const Record&)>& visit) {
  if (Status written = write_pending(); !written) return written;
  for (const auto& s : segments_) {
    if (s->next_seq() <= from) continue;
    auto stopped = s->read(std::max(from, s->base_seq()), visit);
    if (!stopped) return stopped.error();
    if (*stopped) break;
  }
  return Ok{};
}

Result<uint64_t> Log::seq_at_time(uint64_t timestamp_ns) {
  if (Status written = write_pending(); !written) return written.error();
  for (const auto& s : segments_) {
    if (s->empty() || s->last_timestamp_ns() < timestamp_ns) continue;
    return s->seq_at_time(timestamp_ns);
  }
  return next_seq_;
}

void Log::drop_first() {
  if (options_.remove) {
    options_.remove(segments_.front()->paths());
  } else {
    segments_.front()->remove();
  }
  segments_.erase(segments_.begin());
}

size_t Log::drop_before(uint64_t seq, const Retention& keep, uint64_t now_ns) {
  auto kept = [&] {
    const Segment& oldest = *segments_.front();
    return keep.max_bytes != 0 && bytes() <= keep.max_bytes &&
           (keep.max_age_ns == 0 || oldest.last_timestamp_ns() + keep.max_age_ns >= now_ns);
  };
  size_t dropped = 0;
  while (segments_.size() > 1 && segments_.front()->next_seq() <= seq && !kept()) {
    drop_first();
    ++dropped;
  }
  return dropped;
}

size_t Log::apply(const Retention& r, uint64_t now_ns) {
  size_t dropped = 0;
  auto over = [&] {
    const Segment& oldest = *segments_.front();
    return (r.max_bytes != 0 && bytes() > r.max_bytes) ||
           (r.max_records != 0 && next_seq_ - first_seq() > r.max_records) ||
           (r.max_age_ns != 0 && oldest.last_timestamp_ns() + r.max_age_ns < now_ns);
  };
  while (segments_.size() > 1 && over()) {
    drop_first();
    ++dropped;
  }
  return dropped;
}

}  // namespace tw::store
