// A blocking loopback client socket for tests that write protocol bytes by
// hand (HTTP requests, WebSocket frames): every read gives up after the
// safety net, so a broker that does not answer fails the test instead of hanging it.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace tw::testing {

class BlockingSocket {
 public:
  explicit BlockingSocket(uint16_t port, int wait_ms = 5'000);
  ~BlockingSocket();
  BlockingSocket(const BlockingSocket&) = delete;
  BlockingSocket& operator=(const BlockingSocket&) = delete;

  bool connected() const { return connected_; }
  bool send(std::string_view bytes);
  // Reads until `text` has arrived, the peer closes, or the wait ends; everything received so far.
  const std::string& read_until(std::string_view text);
  // Reads until the peer closes; true when it did (false: the wait ended first).
  bool read_to_close();
  const std::string& received() const { return buffer_; }
  void forget() { buffer_.clear(); }

 private:
  bool fill();
  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
  std::string buffer_;
};

}  // namespace tw::testing
