#include "store/file_reaper.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/affinity.h"
#include "base/log.h"

namespace tw::store {

FileReaper::FileReaper() : thread_([this] { run(); }) {}

FileReaper::~FileReaper() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void FileReaper::remove(std::vector<std::string> paths) {
  {
    std::lock_guard lock(mutex_);
    paths_.insert(paths_.end(), std::make_move_iterator(paths.begin()), std::make_move_iterator(paths.end()));
  }
  wake_.notify_one();
}

void FileReaper::run() {
  name_current_thread("tw-store-reap");
  std::vector<std::string> taken;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !paths_.empty(); });
      if (paths_.empty()) return;  // stopping, and everything handed over is gone
      taken.swap(paths_);
    }
    for (const std::string& path : taken) {
      if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
        TW_WARN("store: cannot remove %s: %s", path.c_str(), std::strerror(errno));
      }
    }
    taken.clear();
  }
}

}  // namespace tw::store
