// The terminal under `tickwire top`: its size, keys read one at a time
// without echo, and a frame cut to fit the window.
#pragma once
#include <string>
#include <string_view>

namespace tw::cli {

struct TerminalSize {
  int rows = 0;  // 0 = unknown (not a terminal)
  int cols = 0;
};
// The window of the terminal on `fd` (TIOCGWINSZ); {0, 0} when it is none.
TerminalSize terminal_size(int fd);

// While alive, the terminal on stdin reads keys at once and without echo
// (non-canonical, no echo; Ctrl-C still signals). The settings are restored
// when it ends, on SIGINT, SIGTERM, SIGHUP and SIGQUIT (which also set
// g_stop_requested, so the program ends its loop and exits normally), and
// around a suspension (Ctrl-Z, then fg). Does nothing when stdin is not a
// terminal, or when `keys` is false (then wait_key only waits).
class KeyInput {
 public:
  explicit KeyInput(bool keys = true);
  ~KeyInput();
  KeyInput(const KeyInput&) = delete;
  KeyInput& operator=(const KeyInput&) = delete;
  bool active() const { return active_; }
  // Waits up to timeout_ms for a key (or a signal); the key, or 0 when none came.
  char wait_key(int timeout_ms);

 private:
  bool active_ = false;
};

// `text`'s lines cut to `cols` columns (UTF-8 aware, one column a character)
// and to the first `rows` lines, the last without its newline, so that
// printed from the top-left corner nothing wraps or scrolls. 0 = no limit.
std::string fit_to(std::string_view text, int rows, int cols);

}  // namespace tw::cli
