// Interactive providers for black-box broker tests.
//
// ProviderClient is a provider over a RawClient in the test's own thread:
// PROVIDE/WITHDRAW, read REQUEST and RELEASE, answer with an IMAGE, UPDATEs
// or a STREAM_STATUS. ForkedProvider runs a provider loop in a separate
// process (fork of the test binary) so a test can SIGKILL it; its children
// answer every REQUEST with an image tagged with the provider's name.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "testlib/raw_client.h"

namespace tw::testing {

// What a provider reads from the broker: a REQUEST (with its topic) or a RELEASE.
struct ProviderEvent {
  enum class Kind { Request, Release };
  Kind kind = Kind::Request;
  uint32_t stream_id = 0;
  std::string topic;  // REQUEST only
  bool is_request() const { return kind == Kind::Request; }
};

// Broker flags for provider tests: short timeouts so tests run fast.
struct InteractiveTimeouts {
  int request_timeout_ms = 300;
  int release_linger_ms = 200;
  int not_found_ttl_ms = 10'000;
};
std::vector<std::string> interactive_args(const InteractiveTimeouts& t = {});

// The image a test provider sends: field 1 = stream id (without the top bit),
// field 2 = the provider's tag; updates carry field 3 = their number.
std::vector<uint8_t> provider_image(uint32_t stream_id, const std::string& tag);
std::vector<uint8_t> provider_update(int64_t number);

class ProviderClient {
 public:
  // Connects and completes HELLO/WELCOME; heartbeat_ms is the interval asked
  // for in HELLO (0 = the broker's default).
  bool open(uint16_t port, const std::string& name, uint32_t heartbeat_ms = 0, std::string* why = nullptr);
  RawClient& raw() { return client_; }
  const std::string& name() const { return name_; }

  std::optional<AckReply> provide(uint32_t request_id, std::string_view service, std::string_view pattern = "") {
    return client_.provide(request_id, service, pattern);
  }
  std::optional<AckReply> withdraw(uint32_t request_id, std::string_view service) {
    return client_.withdraw(request_id, service);
  }

  // The next REQUEST or RELEASE (other frames are skipped), or nullopt on
  // timeout or when the broker closed the connection. Every event is also
  // recorded in requests()/releases().
  std::optional<ProviderEvent> next_event(int timeout_ms = kDefaultTimeoutMs);
  // Reads events until `count` REQUESTs in total have been recorded.
  bool read_requests(size_t count, int timeout_ms = kDefaultTimeoutMs);

  bool send_image(uint32_t stream_id, std::span<const uint8_t> payload) {
    return client_.publish(stream_id, payload, true);
  }
  bool send_update(uint32_t stream_id, std::span<const uint8_t> payload) {
    return client_.publish(stream_id, payload, false);
  }
  // The standard image (provider_image with this provider's name as tag).
  bool answer(uint32_t stream_id) { return send_image(stream_id, provider_image(stream_id, name_)); }
  bool not_found(uint32_t stream_id, std::string_view text = "no such item") {
    return client_.send_stream_status(stream_id, wire::ChannelState::Closed, wire::Code::NotFound, text);
  }
  // Answers every recorded REQUEST not answered yet.
  bool answer_all();

  const std::vector<ProviderEvent>& requests() const { return requests_; }
  const std::vector<uint32_t>& releases() const { return releases_; }

 private:
  RawClient client_;
  std::string name_;
  std::vector<ProviderEvent> requests_;
  std::vector<uint32_t> releases_;
  size_t answered_ = 0;  // requests_[0, answered_) have been answered by answer_all
};

struct ForkedProviderOptions {
  std::string name = "forked";  // HELLO client name, also the image tag
  std::string service = "SVC";
  std::string pattern;          // "" = every topic of the service
  int updates_per_request = 0;  // UPDATEs sent right after each image
};

// A provider in a child process of the test binary. The constructor forks
// (call it before the test starts any thread: only then is a fork safe); the
// child waits until start() hands it the broker's port, then connects,
// PROVIDEs and answers REQUESTs until killed. It heart-beats every 100 ms.
class ForkedProvider {
 public:
  explicit ForkedProvider(ForkedProviderOptions options);
  ~ForkedProvider();  // SIGKILL and reap
  ForkedProvider(const ForkedProvider&) = delete;
  ForkedProvider& operator=(const ForkedProvider&) = delete;

  bool forked() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // Sends the port; true once the child's PROVIDE was acknowledged.
  bool start(uint16_t port, int timeout_ms = kDefaultTimeoutMs);
  // SIGKILL, then reap: the broker sees the socket close without a goodbye.
  void kill();

 private:
  [[noreturn]] void run_child();
  ForkedProviderOptions options_;
  pid_t pid_ = -1;
  int to_child_ = -1;    // the port goes here
  int from_child_ = -1;  // one byte: 'R' ready, 'F' failed
};

}  // namespace tw::testing
