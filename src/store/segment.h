// Segment: one file of the log (log.h), holding the records with sequence
// numbers [base_seq, next_seq) back to back (record.h), named by its base:
// `<base_seq, 20 digits>.log`. Only the last segment of a log is written;
// when it is full it is sealed: its index is written beside it
// (`<base_seq>.index`) and both are synced before the next segment exists.
//
// The index is sparse: one entry (seq, file offset, timestamp) per
// index_interval bytes of records, so that a read from a sequence or a time
// starts near it instead of at the file's start. Its trailer (the segment's
// next_seq, size, last timestamp, and a CRC-32C of the whole index) is the
// segment's checkpoint: at recovery a sealed segment whose index checks and
// whose size matches is trusted without reading its records; only the last
// segment, and a sealed one without a valid index, is read record by record.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tickwire/base/result.h"
#include "store/record.h"

namespace tw::store {

struct IndexEntry {
  uint64_t seq = 0;
  uint64_t offset = 0;
  uint64_t timestamp_ns = 0;
};

// What recovery cut from a segment's tail, if anything.
struct Cut {
  uint64_t at_offset = 0;
  uint64_t bytes = 0;
  std::string why;  // "torn record", "checksum mismatch", ...
};

class Segment {
 public:
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  static std::string log_name(const std::string& dir, uint64_t base_seq);
  static std::string index_name(const std::string& dir, uint64_t base_seq);

  // A new, empty segment (the file must not exist).
  static Result<std::unique_ptr<Segment>> create(const std::string& dir, uint64_t base_seq, size_t index_interval);
  // An existing segment. `writable`: it is the log's last, read record by
  // record, its torn or corrupt tail cut (told in `cut`) and opened for
  // appends; otherwise it is trusted by its index when that checks, and read
  // record by record (its index rewritten) when not. A sealed segment with a
  // bad record is an error: what follows it cannot be trusted either.
  static Result<std::unique_ptr<Segment>> open(const std::string& dir, uint64_t base_seq, bool writable,
                                               size_t index_interval, Cut* cut);

  // Appends encoded records (seqs from next_seq on, in order) with one write.
  Status append(std::span<const uint8_t> records, const std::vector<IndexEntry>& starts);
  Status sync();
  // Writes and syncs the index (the checkpoint); no appends after.
  Status seal();
  // Calls visit for each record from `seq` on, in order, until it returns false; true when it stopped early.
  Result<bool> read(uint64_t seq, const std::function<bool(const Record&)>& visit) const;
  // The first record at or after `timestamp_ns`: its seq, or next_seq() when there is none here.
  Result<uint64_t> seq_at_time(uint64_t timestamp_ns) const;
  // Removes both files.
  void remove();
  std::vector<std::string> paths() const { return {log_name(dir_, base_seq_), index_name(dir_, base_seq_)}; }

  uint64_t base_seq() const { return base_seq_; }
  uint64_t next_seq() const { return next_seq_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t last_timestamp_ns() const { return last_timestamp_ns_; }
  bool empty() const { return next_seq_ == base_seq_; }

 private:
  Segment(std::string dir, uint64_t base_seq, size_t index_interval);
  Status scan(bool writable, Cut* cut);
  bool load_index();
  Status write_index() const;
  // The offset of the last index entry at or before `seq` (0 when none).
  uint64_t offset_near(uint64_t seq) const;
  void index(const IndexEntry& start, uint64_t size);

  std::string dir_;
  uint64_t base_seq_;
  size_t index_interval_;
  int fd_ = -1;
  uint64_t next_seq_;
  uint64_t bytes_ = 0;
  uint64_t last_timestamp_ns_ = 0;
  uint64_t unindexed_ = 0;  // record bytes since the last index entry
  std::vector<IndexEntry> index_;
};

}  // namespace tw::store
