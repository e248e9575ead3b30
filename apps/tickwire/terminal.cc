#include "terminal.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <csignal>

#include "common.h"

namespace tw::cli {

TerminalSize terminal_size(int fd) {
  winsize size{};
  if (::ioctl(fd, TIOCGWINSZ, &size) != 0) return {};
  return {size.ws_row, size.ws_col};
}

namespace {

// The settings KeyInput found, restored from signal handlers too (tcsetattr is async-signal-safe).
termios g_saved{};
volatile std::sig_atomic_t g_changed = 0;

void restore_terminal() {
  if (g_changed) ::tcsetattr(STDIN_FILENO, TCSANOW, &g_saved);
}

void keys_mode() {
  termios keys = g_saved;
  keys.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);  // ISIG stays: Ctrl-C still interrupts
  keys.c_cc[VMIN] = 1;
  keys.c_cc[VTIME] = 0;
  ::tcsetattr(STDIN_FILENO, TCSANOW, &keys);
}

void set_handler(int sig, void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  ::sigaction(sig, &action, nullptr);
}

void on_stop(int) {
  restore_terminal();
  g_stop_requested = 1;
}

void on_continue(int);

// Ctrl-Z: the shell gets its terminal back as it was, then the default action stops us.
void on_suspend(int) {
  restore_terminal();
  set_handler(SIGCONT, on_continue);
  set_handler(SIGTSTP, SIG_DFL);
  ::raise(SIGTSTP);  // delivered when this handler returns
}

void on_continue(int) {
  if (g_changed) keys_mode();
  set_handler(SIGTSTP, on_suspend);
}

}  // namespace

KeyInput::KeyInput(bool keys) {
  if (!keys || !::isatty(STDIN_FILENO) || ::tcgetattr(STDIN_FILENO, &g_saved) != 0) return;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) set_handler(sig, on_stop);
  set_handler(SIGTSTP, on_suspend);
  g_changed = 1;
  keys_mode();
  active_ = true;
}

KeyInput::~KeyInput() {
  if (!active_) return;
  set_handler(SIGTSTP, SIG_DFL);
  restore_terminal();
  g_changed = 0;
}

char KeyInput::wait_key(int timeout_ms) {
  if (!active_) {
    ::poll(nullptr, 0, timeout_ms);  // a signal ends it early
    return 0;
  }
  pollfd in{STDIN_FILENO, POLLIN, 0};
  if (::poll(&in, 1, timeout_ms) <= 0) return 0;
  if ((in.revents & POLLIN) == 0) {  // the terminal hung up
    active_ = false;
    return 0;
  }
  char keys[32];
  const ssize_t n = ::read(STDIN_FILENO, keys, sizeof keys);
  if (n <= 0) return 0;
  for (ssize_t i = 0; i < n; ++i)
    if (keys[i] == 'q' || keys[i] == 'Q') return keys[i];
  return keys[0];
}

std::string fit_to(std::string_view text, int rows, int cols) {
  std::string out;
  int row = 0;
  size_t start = 0;
  while (start < text.size() && (rows == 0 || row < rows)) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (row > 0) out += '\n';
    int col = 0;
    for (size_t i = start; i < end; ++i) {
      const bool continuation = (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80;
      if (!continuation && cols != 0 && col++ == cols) break;
      out += text[i];
    }
    ++row;
    start = end + 1;
  }
  return out;
}

}  // namespace tw::cli
