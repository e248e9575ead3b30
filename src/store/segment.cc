#include "store/segment.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "store/crc32c.h"

namespace tw::store {
namespace {

constexpr uint32_t kIndexMagic = 0x58495754;  // "TWIX"
constexpr size_t kEntryBytes = 24;
constexpr size_t kTrailerBytes = 40;
constexpr size_t kReadChunk = 1u << 20;

Error os_error(const std::string& what, const std::string& path) {
  return Error{what + " " + path + ": " + std::strerror(errno)};
}

void put64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

bool read_exactly(int fd, uint8_t* out, size_t size, uint64_t offset) {
  while (size > 0) {
    const ssize_t n = ::pread(fd, out, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

// Walks the records of [offset, end) of the file in order, calling visit(record,
// offset, size) until it returns false. Returns where it stopped and why: Ok
// at `end` or when visit stopped it, Incomplete or Corrupt at a bad record.
struct Walk {
  uint64_t offset;
  Decoded result;
};
// The walking thread's read buffer: grown when a read needs more, never
// shrunk nor cleared. A fresh zero-filled vector per read cost the store
// thread a memset (and, past malloc's mmap threshold, page faults) of up to
// a chunk for every delivery read. A visit gets views into it: it must not
// walk again on the same thread (none does: each copies what it keeps).
std::span<uint8_t> read_buffer(size_t size) {
  thread_local std::vector<uint8_t> buffer;
  if (buffer.size() < size) buffer.resize(size);
  return {buffer.data(), size};
}

Walk walk(int fd, uint64_t offset, uint64_t end,
          const std::function<bool(const Record&, uint64_t, size_t)>& visit) {
  std::span<uint8_t> buffer;
  uint64_t buffer_at = offset;
  size_t used = 0;  // bytes of the buffer consumed
  while (offset < end) {
    if (used == buffer.size() || offset - buffer_at != used) {  // refill from `offset`
      buffer = read_buffer(static_cast<size_t>(std::min<uint64_t>(kReadChunk, end - offset)));
      if (!read_exactly(fd, buffer.data(), buffer.size(), offset)) return {offset, Decoded::Incomplete};
      buffer_at = offset;
      used = 0;
    }
    Record record;
    size_t size = 0;
    Decoded d = decode_record({buffer.data() + used, buffer.size() - used}, record, size);
    if (d == Decoded::Incomplete && buffer_at + buffer.size() < end) {
      // The record runs past what is buffered: read from its start, all of it when it is larger than a chunk.
      buffer = read_buffer(static_cast<size_t>(std::min<uint64_t>(std::max<uint64_t>(kReadChunk, size), end - offset)));
      if (!read_exactly(fd, buffer.data(), buffer.size(), offset)) return {offset, Decoded::Incomplete};
      buffer_at = offset;
      used = 0;
      d = decode_record(buffer, record, size);
    }
    if (d != Decoded::Ok) return {offset, d};
    if (!visit(record, offset, size)) return {offset, Decoded::Ok};
    offset += size;
    used += size;
  }
  return {offset, Decoded::Ok};
}

}  // namespace

Segment::Segment(std::string dir, uint64_t base_seq, size_t index_interval)
    : dir_(std::move(dir)), base_seq_(base_seq), index_interval_(index_interval), next_seq_(base_seq) {}

Segment::~Segment() {
  if (fd_ >= 0) ::close(fd_);
}

std::string Segment::log_name(const std::string& dir, uint64_t base_seq) {
  char name[32];
  std::snprintf(name, sizeof name, "%020" PRIu64 ".log", base_seq);
  return dir + "/" + name;
}

std::string Segment::index_name(const std::string& dir, uint64_t base_seq) {
  char name[32];
  std::snprintf(name, sizeof name, "%020" PRIu64 ".index", base_seq);
  return dir + "/" + name;
}

Result<std::unique_ptr<Segment>> Segment::create(const std::string& dir, uint64_t base_seq, size_t index_interval) {
  std::unique_ptr<Segment> s(new Segment(dir, base_seq, index_interval));
  const std::string path = log_name(dir, base_seq);
  s->fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
  if (s->fd_ < 0) return os_error("cannot create", path);
  return s;
}

Result<std::unique_ptr<Segment>> Segment::open(const std::string& dir, uint64_t base_seq, bool writable,
                                              size_t index_interval, Cut* cut) {
  std::unique_ptr<Segment> s(new Segment(dir, base_seq, index_interval));
  const std::string path = log_name(dir, base_seq);
  s->fd_ = ::open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (s->fd_ < 0) return os_error("cannot open", path);
  if (!writable && s->load_index()) return s;
  if (Status scanned = s->scan(writable, cut); !scanned) return scanned.error();
  if (!writable) {
    if (Status written = s->write_index(); !written) return written.error();
  }
  return s;
}

// Reads every record to rebuild what the index would say; a writable (last)
// segment is cut at its first bad record, a sealed one is refused.
Status Segment::scan(bool writable, Cut* cut) {
  struct stat st{};
  if (::fstat(fd_, &st) != 0) return os_error("cannot stat", log_name(dir_, base_seq_));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  uint64_t expected = base_seq_;
  bool out_of_order = false;
  const Walk w = walk(fd_, 0, size, [&](const Record& r, uint64_t offset, size_t bytes) {
    if (r.seq != expected) {
      out_of_order = true;
      return false;
    }
    index({r.seq, offset, r.timestamp_ns}, bytes);
    ++expected;
    last_timestamp_ns_ = r.timestamp_ns;
    return true;
  });
  next_seq_ = expected;
  bytes_ = w.offset;
  if (w.offset == size && w.result == Decoded::Ok && !out_of_order) return Ok{};
  const char* why = out_of_order ? "a record out of sequence"
                    : w.result == Decoded::Incomplete ? "a torn record"
                                                      : "a record that fails its checksum";
  if (!writable) {
    return Error{log_name(dir_, base_seq_) + ": " + why + " at offset " + std::to_string(w.offset) +
                 " of a sealed segment"};
  }
  if (cut) *cut = {w.offset, size - w.offset, why};
  if (::ftruncate(fd_, static_cast<off_t>(w.offset)) != 0 || ::fdatasync(fd_) != 0) {
    return os_error("cannot cut the torn tail of", log_name(dir_, base_seq_));
  }
  return Ok{};
}

void Segment::index(const IndexEntry& start, uint64_t size) {
  if (index_.empty() || unindexed_ >= index_interval_) {
    index_.push_back(start);
    unindexed_ = 0;
  }
  unindexed_ += size;
}

Status Segment::append(std::span<const uint8_t> records, const std::vector<IndexEntry>& starts) {
  for (size_t i = 0; i < starts.size(); ++i) {
    const uint64_t end = i + 1 < starts.size() ? starts[i + 1].offset : records.size();
    index({starts[i].seq, bytes_ + starts[i].offset, starts[i].timestamp_ns}, end - starts[i].offset);
  }
  const uint8_t* p = records.data();
  size_t left = records.size();
  while (left > 0) {
    const ssize_t n = ::pwrite(fd_, p, left, static_cast<off_t>(bytes_ + (records.size() - left)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const Error failed = os_error("cannot append to", log_name(dir_, base_seq_));
      // What was written of the batch is not part of the log: the next append starts where this one did.
      if (::ftruncate(fd_, static_cast<off_t>(bytes_)) != 0) return Error{failed.message + " (and cannot undo it)"};
      index_.erase(std::remove_if(index_.begin(), index_.end(), [&](const IndexEntry& e) { return e.offset >= bytes_; }),
                   index_.end());
      return failed;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  bytes_ += records.size();
  next_seq_ += starts.size();
  if (!starts.empty()) last_timestamp_ns_ = starts.back().timestamp_ns;
  return Ok{};
}

Status Segment::sync() {
  if (::fdatasync(fd_) != 0) return os_error("cannot sync", log_name(dir_, base_seq_));
  return Ok{};
}

Status Segment::seal() {
  if (Status synced = sync(); !synced) return synced;
  return write_index();
}

Status Segment::write_index() const {
  std::vector<uint8_t> out;
  out.reserve(index_.size() * kEntryBytes + kTrailerBytes);
  for (const IndexEntry& e : index_) {
    put64(out, e.seq);
    put64(out, e.offset);
    put64(out, e.timestamp_ns);
  }
  put64(out, index_.size());
  put64(out, next_seq_);
  put64(out, bytes_);
  put64(out, last_timestamp_ns_);
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(kIndexMagic >> (8 * i)));
  const uint32_t crc = crc32c(out);
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(crc >> (8 * i)));
  // Written aside and renamed: a crash leaves the old index or the new, never half of one.
  const std::string path = index_name(dir_, base_seq_), staged = path + ".new";
  const int fd = ::open(staged.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) return os_error("cannot write", staged);
  const bool written = ::write(fd, out.data(), out.size()) == static_cast<ssize_t>(out.size()) && ::fdatasync(fd) == 0;
  ::close(fd);
  if (!written || ::rename(staged.c_str(), path.c_str()) != 0) return os_error("cannot write", path);
  return Ok{};
}

// A sealed segment's checkpoint: the index, when its checksum holds and the
// file is the size the index says.
bool Segment::load_index() {
  const int fd = ::open(index_name(dir_, base_seq_).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st{};
  std::vector<uint8_t> in;
  if (::fstat(fd, &st) == 0 && st.st_size >= static_cast<off_t>(kTrailerBytes)) {
    in.resize(static_cast<size_t>(st.st_size));
    if (!read_exactly(fd, in.data(), in.size(), 0)) in.clear();
  }
  ::close(fd);
  if (in.size() < kTrailerBytes) return false;
  const uint8_t* t = in.data() + in.size() - kTrailerBytes;
  const uint32_t magic = static_cast<uint32_t>(get64(t + 32));  // magic, then the crc, in one read
  const uint32_t crc = static_cast<uint32_t>(get64(t + 32) >> 32);
  if (magic != kIndexMagic || crc != crc32c({in.data(), in.size() - 4})) return false;
  const uint64_t entries = get64(t);
  if (entries * kEntryBytes + kTrailerBytes != in.size()) return false;
  struct stat log{};
  if (::fstat(fd_, &log) != 0 || static_cast<uint64_t>(log.st_size) != get64(t + 16)) return false;
  index_.clear();
  for (uint64_t i = 0; i < entries; ++i) {
    const uint8_t* e = in.data() + i * kEntryBytes;
    index_.push_back({get64(e), get64(e + 8), get64(e + 16)});
  }
  next_seq_ = get64(t + 8);
  bytes_ = get64(t + 16);
  last_timestamp_ns_ = get64(t + 24);
  return true;
}

uint64_t Segment::offset_near(uint64_t seq) const {
  auto after = std::upper_bound(index_.begin(), index_.end(), seq,
                                [](uint64_t s, const IndexEntry& e) { return s < e.seq; });
  return after == index_.begin() ? 0 : std::prev(after)->offset;
}

Result<bool> Segment::read(uint64_t seq, const std::function<bool(const Record&)>& visit) const {
  if (seq >= next_seq_) return false;
  bool stopped = false;
  const Walk w = walk(fd_, offset_near(seq), bytes_, [&](const Record& r, uint64_t, size_t) {
    if (r.seq < seq) return true;
    stopped = !visit(r);
    return !stopped;
  });
  if (w.result != Decoded::Ok) return Error{log_name(dir_, base_seq_) + ": unreadable record at offset " +
                                            std::to_string(w.offset)};
  return stopped;
}

Result<uint64_t> Segment::seq_at_time(uint64_t timestamp_ns) const {
  auto after = std::upper_bound(index_.begin(), index_.end(), timestamp_ns,
                                [](uint64_t t, const IndexEntry& e) { return t <= e.timestamp_ns; });
  const uint64_t from = after == index_.begin() ? base_seq_ : std::prev(after)->seq;
  uint64_t found = next_seq_;
  auto read = this->read(from, [&](const Record& r) {
    if (r.timestamp_ns < timestamp_ns) return true;
    found = r.seq;
    return false;
  });
  if (!read) return read.error();
  return found;
}

void Segment::remove() {
  ::unlink(log_name(dir_, base_seq_).c_str());
  ::unlink(index_name(dir_, base_seq_).c_str());
}

}  // namespace tw::store
