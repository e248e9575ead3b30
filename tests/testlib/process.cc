#include "testlib/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace tw::testing {

namespace {
using Clock = std::chrono::steady_clock;

ExitStatus decode_wait_status(int raw) {
  ExitStatus s;
  if (WIFEXITED(raw)) {
    s.exited = true;
    s.code = WEXITSTATUS(raw);
  } else if (WIFSIGNALED(raw)) {
    s.signal = WTERMSIG(raw);
  }
  return s;
}

// Runs in the forked child: only async-signal-safe calls until exec.
[[noreturn]] void exec_child(const char* path, char* const* argv, int out_fd, int err_fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(err_fd, STDERR_FILENO);
  ::execv(path, argv);
  const char msg[] = "exec failed\n";
  ssize_t rc = ::write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)rc;
  ::_exit(127);
}
}  // namespace

std::string describe(const ExitStatus& status) {
  if (status.exited) return "exit " + std::to_string(status.code);
  return "signal " + std::to_string(status.signal);
}

Process::Process(const std::string& path, const std::vector<std::string>& args) {
  std::vector<std::string> strings;
  strings.push_back(path);
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return;
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return;
  }
  pid_t pid = ::fork();
  if (pid == 0) exec_child(path.c_str(), argv.data(), out_pipe[1], err_pipe[1]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (pid < 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return;
  }
  pid_ = pid;
  start_reader(out_, out_pipe[0]);
  start_reader(err_, err_pipe[0]);
}

Process::~Process() {
  if (pid_ > 0 && !status_) stop(5000);
  join_readers();
}

void Process::start_reader(Capture& capture, int fd) {
  capture.reader = std::thread([&capture, fd] {
    char buf[4096];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      std::lock_guard lock(capture.mutex);
      if (n <= 0) {
        capture.closed = true;
        capture.changed.notify_all();
        break;
      }
      capture.text.append(buf, static_cast<size_t>(n));
      capture.changed.notify_all();
    }
    ::close(fd);
  });
}

void Process::join_readers() {
  if (out_.reader.joinable()) out_.reader.join();
  if (err_.reader.joinable()) err_.reader.join();
}

bool Process::try_reap(int options) {
  if (pid_ <= 0 || status_) return true;
  int raw = 0;
  pid_t r = ::waitpid(pid_, &raw, options);
  if (r == pid_) {
    status_ = decode_wait_status(raw);
    return true;
  }
  if (r < 0 && errno != EINTR) {
    status_ = ExitStatus{};  // not our child any more; nothing to wait for
    return true;
  }
  return false;
}

bool Process::alive() { return !try_reap(WNOHANG); }

void Process::send_signal(int sig) {
  if (pid_ > 0 && !status_) ::kill(pid_, sig);
}

std::optional<ExitStatus> Process::wait(int timeout_ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!try_reap(WNOHANG)) {
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  join_readers();  // the child is gone: its pipes reach end of file
  return status_;
}

ExitStatus Process::stop(int timeout_ms) {
  if (pid_ <= 0) return {};
  if (auto s = wait(0)) return *s;
  send_signal(SIGTERM);
  if (auto s = wait(timeout_ms)) return *s;
  send_signal(SIGKILL);
  while (!try_reap(0)) {
  }
  join_readers();
  return *status_;
}

std::string Process::out() const {
  std::lock_guard lock(out_.mutex);
  return out_.text;
}

std::string Process::err() const {
  std::lock_guard lock(err_.mutex);
  return err_.text;
}

bool Process::wait_for_out(const std::string& text, int timeout_ms) {
  std::unique_lock lock(out_.mutex);
  return out_.changed.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
    return out_.text.find(text) != std::string::npos || out_.closed;
  }) && out_.text.find(text) != std::string::npos;
}

RunResult run_to_completion(const std::string& path, const std::vector<std::string>& args, int timeout_ms) {
  Process p(path, args);
  RunResult r;
  auto status = p.wait(timeout_ms);
  if (!status) {
    r.timed_out = true;
    status = p.stop(1000);
  }
  r.status = *status;
  r.out = p.out();
  r.err = p.err();
  return r;
}

std::string bin_dir() {
  if (const char* dir = std::getenv("TW_BIN_DIR"); dir != nullptr && *dir != '\0') return dir;
  return TW_TESTLIB_DEFAULT_BIN_DIR;
}

std::string bin_path(const std::string& name) { return bin_dir() + "/" + name; }

TempDir::TempDir() {
  char pattern[] = "/tmp/tw-it-XXXXXX";
  if (::mkdtemp(pattern) != nullptr) path_ = pattern;
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::write(const std::string& name, const std::string& content) const {
  std::string p = file(name);
  std::ofstream(p, std::ios::binary) << content;
  return p;
}

size_t raise_fd_limit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return 0;
  if (lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
  }
  ::getrlimit(RLIMIT_NOFILE, &lim);
  return static_cast<size_t>(lim.rlim_cur);
}

}  // namespace tw::testing
