#include "io/out_queue.h"

#include <cerrno>
#include <climits>
#include <cstring>

namespace tw::io {

namespace {
constexpr size_t kMaxIov = 256;  // well under IOV_MAX; coalescing keeps counts low
// Small: every connection has one, idle ones too (16 KiB here was a page of
// RSS per idle connection). A busy connection's vector grows once and keeps
// its capacity, so the hot path still allocates nothing in the steady state.
constexpr size_t kInitialRefs = 16;
}  // namespace

OutQueue::OutQueue() { refs_.reserve(kInitialRefs); }

void OutQueue::append_ref(std::span<const uint8_t> frame) {
  if (frame.empty()) return;
  auto* base = const_cast<uint8_t*>(frame.data());
  if (!refs_.empty()) {
    iovec& last = refs_.back();
    if (static_cast<uint8_t*>(last.iov_base) + last.iov_len == base) {
      last.iov_len += frame.size();
      ref_bytes_ += frame.size();
      return;
    }
  }
  refs_.push_back({base, frame.size()});
  ref_bytes_ += frame.size();
}

void OutQueue::append_copy(std::span<const uint8_t> frame) {
  move_refs_to_backlog();
  backlog_.insert(backlog_.end(), frame.begin(), frame.end());
}

size_t OutQueue::build_iov(iovec* iov, size_t max) const {
  size_t n = 0;
  if (backlog_sent_ < backlog_.size()) {
    iov[n++] = {const_cast<uint8_t*>(backlog_.data() + backlog_sent_), backlog_.size() - backlog_sent_};
  }
  for (size_t i = 0; i < refs_.size() && n < max; ++i) iov[n++] = refs_[i];
  return n;
}

ssize_t FdWriter::writev(const iovec* iov, int count) {
  for (;;) {
    ssize_t written = ::writev(fd_, iov, count);
    if (written >= 0) return written;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  }
}

FlushResult OutQueue::flush(Writer& out) {
  while (!empty()) {
    iovec iov[kMaxIov];
    size_t n = build_iov(iov, kMaxIov);
    ssize_t written = out.writev(iov, static_cast<int>(n));
    ++write_calls_;
    if (written < 0) return FlushResult::Error;
    bytes_written_ += static_cast<size_t>(written);
    consume(static_cast<size_t>(written));
    size_t offered = 0;
    for (size_t i = 0; i < n; ++i) offered += iov[i].iov_len;
    if (static_cast<size_t>(written) < offered) break;  // socket full
  }
  // Whatever is still referenced must survive the arena reset.
  move_refs_to_backlog();
  compact_backlog();
  return empty() ? FlushResult::Done : FlushResult::Pending;
}

void OutQueue::consume(size_t n) {
  size_t from_backlog = std::min(n, backlog_.size() - backlog_sent_);
  backlog_sent_ += from_backlog;
  n -= from_backlog;
  size_t i = 0;
  while (n > 0 && i < refs_.size()) {
    size_t take = std::min(n, refs_[i].iov_len);
    refs_[i].iov_base = static_cast<uint8_t*>(refs_[i].iov_base) + take;
    refs_[i].iov_len -= take;
    ref_bytes_ -= take;
    n -= take;
    if (refs_[i].iov_len == 0) ++i;
  }
  refs_.erase(refs_.begin(), refs_.begin() + static_cast<long>(i));
}

void OutQueue::compact_backlog() {
  if (backlog_sent_ == 0) return;
  if (backlog_sent_ == backlog_.size()) {
    backlog_.clear();
  } else if (backlog_sent_ >= backlog_.size() / 2) {
    backlog_.erase(backlog_.begin(), backlog_.begin() + static_cast<long>(backlog_sent_));
  } else {
    return;
  }
  backlog_sent_ = 0;
}

void OutQueue::move_refs_to_backlog() {
  if (refs_.empty()) return;
  compact_backlog();
  for (const iovec& r : refs_) {
    auto* p = static_cast<const uint8_t*>(r.iov_base);
    backlog_.insert(backlog_.end(), p, p + r.iov_len);
  }
  refs_.clear();
  ref_bytes_ = 0;
}

}  // namespace tw::io
