// FileReaper: unlinks files on a thread of its own, for a thread that must
// not wait for the filesystem (store::LogOptions::remove: the store thread
// dropping whole segments, whose unlink frees 64 MiB of blocks).
#pragma once
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tw::store {

class FileReaper {
 public:
  FileReaper();
  ~FileReaper();  // unlinks what was handed over, then stops
  FileReaper(const FileReaper&) = delete;
  FileReaper& operator=(const FileReaper&) = delete;

  // Any thread; never waits for the unlinks.
  void remove(std::vector<std::string> paths);

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::string> paths_;  // under mutex_
  bool stopping_ = false;           // under mutex_
  std::thread thread_;
};

}  // namespace tw::store
