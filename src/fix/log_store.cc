// tw::fix::LogStore (log_store.h). C++14, with QuickFIX.
#include "fix/log_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace tw {
namespace fix {
namespace {

const size_t kHeader = 9;                   // u32 length, u32 CRC, u8 type
const uint32_t kMaxRecord = 64u << 20;      // longer than any FIX message QuickFIX accepts

uint32_t crc32(const char* data, size_t size, uint32_t crc = 0) {
  static uint32_t table[256];
  static bool ready = [] {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    return true;
  }();
  (void)ready;
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ static_cast<uint8_t>(data[i])) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw FIX::IOException(what + " " + path + ": " + std::strerror(errno));
}

void make_dirs(const std::string& dir) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at != dir.size() && dir[at] != '/') continue;
    std::string part = dir.substr(0, at);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) fail("cannot create", part);
  }
}

bool read_fully(int fd, char* out, size_t size, off_t at) {
  while (size > 0) {
    ssize_t n = ::pread(fd, out, size, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out += n;
    size -= static_cast<size_t>(n);
    at += n;
  }
  return true;
}

int int_at(const char* p) {
  int v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

LogStore::LogStore(const std::string& path, LogStoreFlusher* flusher) : path_(path), flusher_(flusher) {
  open_and_load();
  if (flusher_) flusher_->add(this);
}

LogStore::~LogStore() {
  if (flusher_) flusher_->remove(this);
  try {
    flush();
  } catch (const FIX::IOException&) {
    // Nothing to tell: the session is gone. What was pending is a target
    // sequence number, which the peer's resend recovers.
  }
  if (fd_ >= 0) ::close(fd_);
}

void LogStore::open_and_load() {
  size_t slash = path_.rfind('/');
  if (slash != std::string::npos && slash > 0) make_dirs(path_.substr(0, slash));
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("cannot open", path_);
  load();
}

// Replays the records; cuts the file after the last whole one.
void LogStore::load() {
  messages_.clear();
  next_sender_ = next_target_ = 1;
  bool created = false;
  off_t at = 0;
  std::string payload;
  char header[kHeader];
  while (read_fully(fd_, header, kHeader, at)) {
    uint32_t length, crc;
    std::memcpy(&length, header, 4);
    std::memcpy(&crc, header + 4, 4);
    if (length > kMaxRecord) break;
    payload.resize(length);
    if (length > 0 && !read_fully(fd_, &payload[0], length, at + static_cast<off_t>(kHeader))) break;
    if (crc32(payload.data(), length, crc32(header + 8, 1)) != crc) break;
    const char type = header[8];
    if (type == 'M' && length >= 4) {
      int seq = int_at(payload.data());
      messages_[seq] = std::make_pair(at + static_cast<off_t>(kHeader + 4), length - 4);
      if (seq + 1 > next_sender_) next_sender_ = seq + 1;
    } else if (type == 'S' && length == 4) {
      next_sender_ = int_at(payload.data());
    } else if (type == 'T' && length == 4) {
      next_target_ = int_at(payload.data());
    } else if (type == 'C' && length == 8) {
      int64_t ms;
      std::memcpy(&ms, payload.data(), 8);
      creation_ = FIX::UtcTimeStamp(static_cast<time_t>(ms / 1000), static_cast<int>(ms % 1000));
      created = true;
    } else {
      break;  // a record of a kind we do not write: treat as torn
    }
    at += static_cast<off_t>(kHeader + length);
  }
  struct stat st;
  if (::fstat(fd_, &st) != 0) fail("cannot stat", path_);
  cut_at_open_ = st.st_size - at;
  if (cut_at_open_ > 0 && ::ftruncate(fd_, at) != 0) fail("cannot truncate", path_);
  size_ = at;
  logged_sender_ = next_sender_;
  logged_target_ = next_target_;
  if (!created) {
    creation_.setCurrent();
    append_creation();
    flush_locked(false);
  }
}

void LogStore::append_creation() {
  int64_t ms = static_cast<int64_t>(creation_.getTimeT()) * 1000 + creation_.getMillisecond();
  append('C', &ms, sizeof ms);
}

void LogStore::append(char type, const void* payload, size_t size, const std::string* text) {
  uint32_t length = static_cast<uint32_t>(size + (text ? text->size() : 0));
  uint32_t crc = crc32(&type, 1);
  crc = crc32(static_cast<const char*>(payload), size, crc);
  if (text) crc = crc32(text->data(), text->size(), crc);
  buffer_.append(reinterpret_cast<const char*>(&length), 4);
  buffer_.append(reinterpret_cast<const char*>(&crc), 4);
  buffer_.push_back(type);
  buffer_.append(static_cast<const char*>(payload), size);
  if (text) buffer_.append(*text);
}

// Adds the target sequence number if the log does not say it yet (and the
// sender's, `with_sender`), then writes it all. Only the callers that change
// the sender's number write it: between set() and QuickFIX's increment that
// follows, next_sender_ is one behind what the log already says.
void LogStore::flush_locked(bool with_sender) {
  if (with_sender && next_sender_ != logged_sender_) {
    append_int('S', next_sender_);
    logged_sender_ = next_sender_;
  }
  if (next_target_ != logged_target_) append_int('T', next_target_);
  logged_target_ = next_target_;
  size_t done = 0;
  while (done < buffer_.size()) {
    ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      // Cut what part of it went out (a full disk), so that a later write
      // that succeeds follows whole records: a torn one would end the log.
      // buffer_ stays, for the next flush to write whole.
      const int error = errno;
      const bool cut = ::ftruncate(fd_, size_) == 0;
      errno = error;
      fail(cut ? "cannot write" : "cannot write (nor cut the torn record of)", path_);
    }
    done += static_cast<size_t>(n);
  }
  size_ += static_cast<off_t>(buffer_.size());
  buffer_.clear();
}

void LogStore::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!buffer_.empty() || next_target_ != logged_target_) flush_locked(false);
}

bool LogStore::set(int seq, const std::string& message) throw(FIX::IOException) {
  std::lock_guard<std::mutex> lock(mutex_);
  off_t text_at = size_ + static_cast<off_t>(buffer_.size() + kHeader + 4);
  append('M', &seq, sizeof seq, &message);
  messages_[seq] = std::make_pair(text_at, static_cast<uint32_t>(message.size()));
  // The message says its successor is next; QuickFIX increments right after.
  if (seq + 1 > logged_sender_) logged_sender_ = seq + 1;
  flush_locked(false);
  return true;
}

void LogStore::get(int begin, int end, std::vector<std::string>& out) const throw(FIX::IOException) {
  std::lock_guard<std::mutex> lock(mutex_);
  out.clear();
  for (auto it = messages_.lower_bound(begin); it != messages_.end() && it->first <= end; ++it) {
    std::string text(it->second.second, '\0');
    // Every set() is written before it returns, so the text is in the file.
    if (!text.empty() && !read_fully(fd_, &text[0], text.size(), it->second.first)) fail("cannot read", path_);
    out.push_back(std::move(text));
  }
}

int LogStore::getNextSenderMsgSeqNum() const throw(FIX::IOException) {
  std::lock_guard<std::mutex> lock(mutex_);
  return next_sender_;
}

int LogStore::getNextTargetMsgSeqNum() const throw(FIX::IOException) {
  std::lock_guard<std::mutex> lock(mutex_);
  return next_target_;
}

// Explicit changes (a SequenceReset, a logon with a reset) are rare: written at once.
void LogStore::setNextSenderMsgSeqNum(int value) throw(FIX::IOException) {
  std::lock_guard<std::mutex> lock(mutex_);
  next_sender_ = value;
  flush_locked(true);
}

void LogStore::setNextTargetMsgSeqNum(int value) throw(FIX::IOException) {
  std::lock_guard<std::mutex> lock(mutex_);
  next_target_ = value;
  flush_locked(false);
}

// Follows set() of the message just sent, which the log already says. Without
// a set() (PersistMessages off) the number is written at once: it must be on
// disk before the message goes out, or a restart would reuse it.
void LogStore::incrNextSenderMsgSeqNum() throw(FIX::IOException) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++next_sender_;
  if (next_sender_ > logged_sender_) flush_locked(true);
}

void LogStore::incrNextTargetMsgSeqNum() throw(FIX::IOException) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++next_target_;
  }
  if (flusher_) flusher_->wake();
}

FIX::UtcTimeStamp LogStore::getCreationTime() const throw(FIX::IOException) {
  std::lock_guard<std::mutex> lock(mutex_);
  return creation_;
}

void LogStore::reset() throw(FIX::IOException) {
  std::lock_guard<std::mutex> lock(mutex_);
  buffer_.clear();
  if (::ftruncate(fd_, 0) != 0) fail("cannot truncate", path_);
  size_ = 0;
  messages_.clear();
  next_sender_ = next_target_ = logged_sender_ = logged_target_ = 1;
  creation_.setCurrent();
  append_creation();
  flush_locked(false);
}

// Nobody else writes the file: what is in memory is what it says.
void LogStore::refresh() throw(FIX::IOException) { flush(); }

LogStoreFlusher::LogStoreFlusher(int delay_ms) : delay_ms_(delay_ms), thread_([this] { run(); }) {}

LogStoreFlusher::~LogStoreFlusher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

void LogStoreFlusher::add(LogStore* store) {
  std::lock_guard<std::mutex> lock(mutex_);
  stores_.insert(store);
}

void LogStoreFlusher::remove(LogStore* store) {
  std::lock_guard<std::mutex> lock(mutex_);
  stores_.erase(store);
}

void LogStoreFlusher::wake() {
  if (pending_.exchange(true)) return;  // already on its way
  std::lock_guard<std::mutex> lock(mutex_);
  cv_.notify_one();
}

void LogStoreFlusher::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || pending_.load(); });
    if (stop_) return;
    // Wait a little so that one write covers a burst of received messages.
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
    pending_.store(false);
    lock.lock();
    for (LogStore* store : stores_) {
      try {
        store->flush();
      } catch (const FIX::IOException& e) {
        // The session's next set() meets it too and throws it to QuickFIX.
        std::fprintf(stderr, "tickwire-fix: %s\n", e.what());
      }
    }
  }
}

FIX::MessageStore* LogStoreFactory::create(const FIX::SessionID& id) {
  return new LogStore(log_store_path(dir_, id), &flusher_);
}

namespace {
// QuickFIX's FileStore names its files <BeginString>-<Sender>-<Target>[-<Qualifier>].*
std::string file_prefix(const FIX::SessionID& id) {
  std::string name = id.getBeginString().getValue() + "-" + id.getSenderCompID().getValue() + "-" +
                     id.getTargetCompID().getValue();
  if (!id.getSessionQualifier().empty()) name += "-" + id.getSessionQualifier();
  return name;
}
bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}
}  // namespace

std::string log_store_path(const std::string& dir, const FIX::SessionID& id) {
  return dir + "/" + file_prefix(id) + ".twlog";
}

bool log_store_exists(const std::string& dir, const FIX::SessionID& id) { return exists(log_store_path(dir, id)); }

bool file_store_exists(const std::string& dir, const FIX::SessionID& id) {
  return exists(dir + "/" + file_prefix(id) + ".seqnums");
}

}  // namespace fix
}  // namespace tw
