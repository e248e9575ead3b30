#include "perf/run/child_process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace tw::perf::run {

namespace {

double seconds_of(const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; }

// Runs in the forked child: wire up fds and exec; never returns.
[[noreturn]] void exec_child(const ChildSpec& spec, int pipe_write) {
  int err_fd = -1;
  if (!spec.stderr_path.empty()) {
    err_fd = open(spec.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (err_fd >= 0) dup2(err_fd, STDERR_FILENO);
  }
  if (spec.capture_stdout) dup2(pipe_write, STDOUT_FILENO);
  else if (err_fd >= 0) dup2(err_fd, STDOUT_FILENO);
  std::vector<char*> argv;
  for (const std::string& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  std::fprintf(stderr, "exec %s: %s\n", argv[0], std::strerror(errno));
  _exit(127);
}

}  // namespace

Result<Child> Child::spawn(const ChildSpec& spec) {
  if (spec.argv.empty()) return Error{"spawn: empty argv"};
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return Error{std::string("fork: ") + std::strerror(errno)};
  }
  if (pid == 0) exec_child(spec, fds[1]);
  close(fds[1]);
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  Child child;
  child.pid_ = pid;
  child.fd_ = fds[0];
  return child;
}

Child::Child(Child&& other) noexcept { *this = std::move(other); }

Child& Child::operator=(Child&& other) noexcept {
  if (this == &other) return *this;
  std::swap(pid_, other.pid_);
  std::swap(fd_, other.fd_);
  std::swap(exited_, other.exited_);
  std::swap(exit_status_, other.exit_status_);
  std::swap(cpu_seconds_, other.cpu_seconds_);
  std::swap(partial_, other.partial_);
  std::swap(lines_, other.lines_);
  return *this;
}

Child::~Child() {
  if (pid_ > 0 && !exited_) terminate(200);
  close_fd();
}

void Child::close_fd() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

bool Child::read_available() {
  if (fd_ < 0) return false;
  char buffer[4096];
  for (;;) {
    ssize_t n = read(fd_, buffer, sizeof buffer);
    if (n > 0) {
      partial_.append(buffer, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
    close_fd();  // end of file or error
    break;
  }
  for (size_t newline; (newline = partial_.find('\n')) != std::string::npos;) {
    lines_.push_back(partial_.substr(0, newline));
    partial_.erase(0, newline + 1);
  }
  return fd_ >= 0;
}

std::vector<std::string> Child::take_lines() {
  std::vector<std::string> lines;
  lines.swap(lines_);
  return lines;
}

bool Child::try_reap() {
  if (exited_ || pid_ <= 0) return exited_;
  int status = 0;
  rusage usage{};
  pid_t reaped = wait4(pid_, &status, WNOHANG, &usage);
  if (reaped == pid_) {
    exited_ = true;
    exit_status_ = status;
    cpu_seconds_ = seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime);
  }
  return exited_;
}

void Child::terminate(int grace_ms) {
  if (pid_ <= 0 || try_reap()) return;
  kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    read_available();
    if (try_reap()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid_, SIGKILL);
  while (!try_reap()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

void pump_children(std::vector<Child*>& children, int timeout_ms) {
  std::vector<pollfd> fds;
  for (Child* child : children)
    if (child->stdout_fd() >= 0) fds.push_back({child->stdout_fd(), POLLIN, 0});
  if (fds.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
  } else {
    poll(fds.data(), fds.size(), timeout_ms);
  }
  for (Child* child : children) child->read_available();
}

Result<int> pick_free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Error{std::string("socket: ") + std::strerror(errno)};
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    close(fd);
    return Error{std::string("bind: ") + std::strerror(errno)};
  }
  close(fd);
  return static_cast<int>(ntohs(address.sin_port));
}

bool wait_for_port(int port, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<uint16_t>(port));
    bool connected = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    close(fd);
    if (connected) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace tw::perf::run
