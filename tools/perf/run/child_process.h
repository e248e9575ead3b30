// Child processes whose stdout is read line by line (the JSON lines of
// `perf pub` / `perf sub`) and whose CPU time is taken from wait4's rusage.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

#include "tickwire/base/result.h"

namespace tw::perf::run {

struct ChildSpec {
  std::vector<std::string> argv;  // argv[0] is the program path
  std::string stderr_path;        // child's stderr goes here (appended); empty = inherited
  bool capture_stdout = true;     // false: stdout goes to stderr_path too
};

// One child. Not copyable: it owns the pipe and the process until reaped.
class Child {
 public:
  static Result<Child> spawn(const ChildSpec& spec);

  Child(Child&& other) noexcept;
  Child& operator=(Child&& other) noexcept;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child();  // kills and reaps a child still running

  pid_t pid() const { return pid_; }
  bool exited() const { return exited_; }
  int exit_status() const { return exit_status_; }  // waitpid status (see WIFEXITED)
  double cpu_seconds() const { return cpu_seconds_; }  // from rusage, once exited
  int stdout_fd() const { return fd_; }

  // Reads what is available from stdout (non-blocking); false at end of file.
  bool read_available();
  // Complete lines received so far and not yet taken.
  std::vector<std::string> take_lines();
  // Reaps the child if it has exited (WNOHANG); true once exited.
  bool try_reap();
  // SIGTERM, then SIGKILL after grace_ms; reaps.
  void terminate(int grace_ms);

 private:
  Child() = default;
  void close_fd();

  pid_t pid_ = -1;
  int fd_ = -1;
  bool exited_ = false;
  int exit_status_ = 0;
  double cpu_seconds_ = 0;
  std::string partial_;
  std::vector<std::string> lines_;
};

// Waits up to timeout_ms for output on any of the children's stdout and reads it.
void pump_children(std::vector<Child*>& children, int timeout_ms);

// A TCP port free on 127.0.0.1 at the time of the call (for --broker-cmd).
Result<int> pick_free_port();
// True once a TCP connection to 127.0.0.1:port succeeds, within timeout_ms.
bool wait_for_port(int port, int timeout_ms);

}  // namespace tw::perf::run
