// Child processes for black-box tests: start a program with arguments, capture
// its stdout and stderr through pipes (read by background threads, so a chatty
// child never blocks on a full pipe), signal it, and wait for it with a timeout.
//
// Lifecycle: the destructor always ends the child (SIGTERM, then SIGKILL) and
// reaps it, so no test leaves a process behind. The child also gets SIGKILL if
// the test process dies (PR_SET_PDEATHSIG).
#pragma once
#include <sys/types.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace tw::testing {

// How a child ended.
struct ExitStatus {
  bool exited = false;  // ended by exit(); otherwise by a signal
  int code = -1;        // exit code when exited
  int signal = 0;       // terminating signal otherwise
  bool clean() const { return exited && code == 0; }
};
std::string describe(const ExitStatus& status);  // "exit 0", "signal 9"

class Process {
 public:
  // Starts `path` with `args` (argv[0] is the path). started() tells whether exec worked.
  Process(const std::string& path, const std::vector<std::string>& args);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // True while the child has not exited (reaps it when it has).
  bool alive();
  void send_signal(int sig);
  // Waits up to timeout_ms for the child to exit; nullopt while it still runs.
  std::optional<ExitStatus> wait(int timeout_ms);
  // SIGTERM, wait up to timeout_ms, then SIGKILL; returns how it ended.
  ExitStatus stop(int timeout_ms = 5000);
  // The status once the child has been reaped.
  std::optional<ExitStatus> exit_status() const { return status_; }

  // Everything the child wrote so far.
  std::string out() const;
  std::string err() const;
  // Waits until stdout contains `text` (true) or timeout_ms passes / the pipe closes (false).
  bool wait_for_out(const std::string& text, int timeout_ms);

 private:
  struct Capture {
    mutable std::mutex mutex;
    std::condition_variable changed;
    std::string text;
    bool closed = false;
    std::thread reader;
  };
  void start_reader(Capture& capture, int fd);
  void join_readers();
  bool try_reap(int options);

  pid_t pid_ = -1;
  std::optional<ExitStatus> status_;
  Capture out_;
  Capture err_;
};

// Runs a program to completion (killed after timeout_ms) and returns its output.
struct RunResult {
  ExitStatus status;
  bool timed_out = false;
  std::string out;
  std::string err;
};
RunResult run_to_completion(const std::string& path, const std::vector<std::string>& args, int timeout_ms = 10000);

// The directory holding the built executables: $TW_BIN_DIR, else the build's apps/.
std::string bin_dir();
std::string bin_path(const std::string& name);

// A private temporary directory, removed (with its files) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // Writes `content` to a file in the directory and returns its path.
  std::string write(const std::string& name, const std::string& content) const;

 private:
  std::string path_;
};

// Raises the soft RLIMIT_NOFILE to the hard limit (children inherit it).
// Returns the new soft limit.
size_t raise_fd_limit();

}  // namespace tw::testing
