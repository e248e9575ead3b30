// tw::fix::LogStore: a QuickFIX MessageStore that appends everything a
// session must keep (the messages it sent, its sequence numbers, its
// creation time) to one log file per session, in one write() per sent
// message instead of QuickFIX FileStore's four to six system calls (fseek,
// fwrite and fflush of the message, and a rewrite of the sequence-number
// file, per message sent and per message received). docs/fix.md, "Stores".
//
// When it writes, and what a crash can lose:
// - set() (QuickFIX calls it for every message it sends, before the socket
//   send) writes the message, and with it every update still pending, before
//   returning. The next sender sequence number is implied by the message
//   (its MsgSeqNum + 1), so a process killed at any point never reuses a
//   sequence number the peer has seen: the peer would log out on a MsgSeqNum
//   too low.
// - The next target sequence number (incremented for every message
//   received) is not written on its own: it goes out with the next set() or,
//   when nothing is sent, with the flusher's write (LogStoreFlusher, 2 ms).
//   A process killed before that asks the peer to resend those messages at
//   its next logon; they come with PossDupFlag (43) = Y (the gateway
//   forwards such reports with PossResend 97 = Y, docs/fix.md, "Routing").
// - Written means write(2): in the kernel's page cache, safe from a crash of
//   the process (kill -9), as FileStore's fflush is. Neither fsyncs: a crash
//   of the machine can lose the last seconds of both. A message whose write
//   was lost cannot be resent: QuickFIX answers a resend request for it with
//   a gap fill (SequenceReset-GapFill), as for any message it cannot find.
//
// File format: records of [u32 length of the payload][u32 CRC-32 of type +
// payload][u8 type][payload], in the machine's byte order. Types: 'C'
// creation time (ms), 'M' a sent message (i32 seq + the FIX text), 'S' / 'T'
// the next sender / target sequence number ('S' only where it was set, not
// implied by an 'M'). Opening replays them; a record cut short or failing
// its CRC (a write torn by a crash) ends the log there and is cut
// off. reset() truncates the file.
//
// Compiled as C++14 with QuickFIX (engine.h); thread-safe (QuickFIX calls a
// store under its session's lock, the flusher from its own thread).
#pragma once
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fix/quickfix_includes.h"

namespace tw {
namespace fix {

class LogStoreFlusher;

class LogStore : public FIX::MessageStore {
 public:
  // Opens (creating it and `dir` if need be) `path`; throws FIX::IOException.
  // `flusher` may be null: pending target sequence numbers then wait for
  // the next set() or the destructor.
  LogStore(const std::string& path, LogStoreFlusher* flusher);
  ~LogStore() override;

  bool set(int seq, const std::string& message) throw(FIX::IOException) override;
  void get(int begin, int end, std::vector<std::string>& out) const throw(FIX::IOException) override;
  int getNextSenderMsgSeqNum() const throw(FIX::IOException) override;
  int getNextTargetMsgSeqNum() const throw(FIX::IOException) override;
  void setNextSenderMsgSeqNum(int value) throw(FIX::IOException) override;
  void setNextTargetMsgSeqNum(int value) throw(FIX::IOException) override;
  void incrNextSenderMsgSeqNum() throw(FIX::IOException) override;
  void incrNextTargetMsgSeqNum() throw(FIX::IOException) override;
  FIX::UtcTimeStamp getCreationTime() const throw(FIX::IOException) override;
  void reset() throw(FIX::IOException) override;
  void refresh() throw(FIX::IOException) override;

  // Writes what is pending (the flusher, tests). Throws FIX::IOException.
  void flush();
  // Bytes cut off the end at the last open (a torn tail); for tests.
  off_t cut_at_open() const { return cut_at_open_; }

 private:
  void open_and_load();
  void load();
  void append(char type, const void* payload, size_t size, const std::string* text = nullptr);
  void append_int(char type, int value) { append(type, &value, sizeof value); }
  void append_creation();
  void flush_locked(bool with_sender);

  const std::string path_;
  LogStoreFlusher* const flusher_;
  mutable std::mutex mutex_;
  int fd_ = -1;
  off_t size_ = 0;  // the file's length once buffer_ is written
  std::string buffer_;  // records not yet written
  std::map<int, std::pair<off_t, uint32_t>> messages_;  // seq -> where its text is in the file
  int next_sender_ = 1;
  int next_target_ = 1;
  int logged_sender_ = 1;  // what the log (buffer_ included) says
  int logged_target_ = 1;
  FIX::UtcTimeStamp creation_;
  off_t cut_at_open_ = 0;
};

// Writes the stores' pending target sequence numbers within `delay_ms` of
// their first change, from one thread for all stores: received messages are
// acknowledged to disk in batches, not one write each.
class LogStoreFlusher {
 public:
  explicit LogStoreFlusher(int delay_ms);
  ~LogStoreFlusher();
  void add(LogStore* store);
  void remove(LogStore* store);
  void wake();  // a store has something pending

 private:
  void run();
  const int delay_ms_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::set<LogStore*> stores_;
  std::atomic<bool> pending_{false};
  bool stop_ = false;
  std::thread thread_;
};

// Creates a LogStore per session in `dir` (<BeginString>-<Sender>-<Target>.twlog).
class LogStoreFactory : public FIX::MessageStoreFactory {
 public:
  explicit LogStoreFactory(const std::string& dir, int flush_delay_ms = 2) : dir_(dir), flusher_(flush_delay_ms) {}
  FIX::MessageStore* create(const FIX::SessionID& id) override;
  void destroy(FIX::MessageStore* store) override { delete store; }

 private:
  std::string dir_;
  LogStoreFlusher flusher_;
};

std::string log_store_path(const std::string& dir, const FIX::SessionID& id);
bool log_store_exists(const std::string& dir, const FIX::SessionID& id);
// Whether QuickFIX's FileStore keeps this session in `dir` (its .seqnums file).
bool file_store_exists(const std::string& dir, const FIX::SessionID& id);

}  // namespace fix
}  // namespace tw
