// Log: a segmented append-only log of records (record.h) in one directory,
// with sequence numbers from 1 that only grow (docs/ARCHITECTURE.md,
// "Storage seam", states what a store guarantees; this is that store).
//
//   append   buffers a record and gives it the next sequence number;
//   sync     writes what is buffered (one write) and fdatasyncs it: from then
//            on everything appended is durable (durable_seq). A caller that
//            acknowledges a record waits for this, never for append alone;
//            Committer (committer.h) batches many appends per sync;
//   read     from any sequence still held, or from a time (the sparse indexes);
//   drop     whole segments only, oldest first: below the consumers'
//            acknowledgement floor, or past a retention bound. No record is
//            ever deleted on its own, so nothing is rewritten and no
//            tombstone is kept.
//
// Recovery (open): the sealed segments are trusted by their checkpoints
// (segment.h); the last is read record by record and cut at its first torn
// or corrupt record, which Recovery reports. Nothing is invented or
// reordered: the log holds exactly the whole records before the cut.
//
// Not thread-safe: one thread owns it (the committer's, in the broker).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tickwire/base/result.h"
#include "store/record.h"
#include "store/segment.h"

namespace tw::store {

struct LogOptions {
  uint64_t segment_bytes = 64u << 20;  // a segment is sealed when the next record would take it past this
  size_t index_interval = 64u << 10;   // record bytes between two index entries
  // Removes a dropped segment's files (its log and its index); empty: unlink
  // at once. Unlinking a 64 MiB segment stalls the caller for milliseconds
  // (the filesystem frees its blocks), so a broker hands it to another thread
  // (queue::Spool). A name is never reused (segments are named by base seq), and a file a crash
  // leaves behind is below the floor at the next start: dropped again.
  std::function<void(std::vector<std::string> paths)> remove;
};

// Bounds on what the log keeps; 0 = no bound. Applied by whole segments, oldest first, never the last.
struct Retention {
  uint64_t max_bytes = 0;
  uint64_t max_age_ns = 0;
  uint64_t max_records = 0;
};

struct Recovery {
  size_t segments = 0;
  uint64_t first_seq = 0;
  uint64_t next_seq = 0;
  std::optional<Cut> cut;  // what was cut from the last segment's tail
};

class Log {
 public:
  ~Log();
  static Result<std::unique_ptr<Log>> open(const std::string& dir, const LogOptions& options = {},
                                           Recovery* recovery = nullptr);

  // Whether a record can be stored at all (its topic and size), whatever the disk.
  static Status check(std::string_view topic, size_t payload_size);
  // Buffers one record; its sequence number. A timestamp earlier than the
  // last record's is raised to it, so that times never go back in the log.
  Result<uint64_t> append(uint64_t timestamp_ns, uint8_t flags, std::string_view topic,
                          std::span<const uint8_t> payload);
  // Writes what is buffered and makes everything appended durable. On an
  // error (a full disk) the buffered records are not in the log: the next
  // append reuses their sequence numbers.
  Status sync();

  uint64_t first_seq() const;                 // the oldest record held (next_seq() when none)
  uint64_t next_seq() const { return next_seq_; }
  uint64_t durable_seq() const { return durable_seq_; }  // every record below it is on stable storage
  uint64_t bytes() const;                     // on disk, in every segment
  size_t segment_count() const { return segments_.size(); }

  // Visits the records from `from` (clamped to first_seq) on, in order,
  // until visit returns false; writes what is buffered first.
  Status read(uint64_t from, const std::function<bool(const Record&)>& visit);
  // The first record at or after the time, or next_seq() when none.
  Result<uint64_t> seq_at_time(uint64_t timestamp_ns);

  // Drops the segments whose records are all below `seq`, oldest first; how
  // many. `keep` holds them back for replay (docs/guaranteed.md, "Replay"):
  // the oldest stays while the log is within keep.max_bytes and its newest
  // record within keep.max_age_ns of now_ns (0: any age). keep.max_bytes 0 keeps none.
  size_t drop_before(uint64_t seq, const Retention& keep = {}, uint64_t now_ns = 0);
  size_t apply(const Retention& retention, uint64_t now_ns);

 private:
  Log(std::string dir, const LogOptions& options);
  Status write_pending();
  Status roll();
  void drop_first();

  std::string dir_;
  LogOptions options_;
  int dir_fd_ = -1;
  std::vector<std::unique_ptr<Segment>> segments_;  // oldest first; the last is written
  uint64_t next_seq_ = 1;
  uint64_t durable_seq_ = 1;
  uint64_t last_timestamp_ns_ = 0;
  std::vector<uint8_t> pending_;            // encoded records not yet written
  std::vector<IndexEntry> pending_starts_;  // each one's seq, offset in pending_, time
};

}  // namespace tw::store
