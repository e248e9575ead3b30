// An interactive provider that serves DemoMarket data: `tickwire provider`
// and `tickwire demo-feed --provider`. The broker asks for topics (REQUEST);
// each requested topic's last level names a symbol, which gets an image and
// then updates (round-robin over the open streams at a total rate) until the
// broker releases it. Symbols outside a known list are refused NOT_FOUND.
//
// Threading: everything runs on the thread that calls run(). The request
// handler only queues the stream; images are sent from the loop so back
// pressure can be waited out with poll() (not allowed inside a handler).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tickwire/client/client.h"
#include "demo_market.h"

namespace tw::cli {

struct MarketProviderOptions {
  std::string service;   // one topic level, e.g. "DEMO"
  std::string pattern;   // "" = every topic of the service
  double rate = 100;     // updates per second across all open streams; 0 = as fast as possible
  double seconds = 0;    // stop after this long; 0 = until interrupted
  std::optional<std::unordered_set<std::string>> known_symbols;  // unset = serve any symbol
  bool log_streams = true;   // one stderr line per request / release / refusal
  bool log_images = false;   // also one per image sent (--verbose)
  std::string name = "provider";  // prefix of printed lines
};

struct MarketProviderSummary {
  uint64_t requests = 0;
  uint64_t served = 0;      // answered with an image
  uint64_t not_found = 0;
  uint64_t releases = 0;
  uint64_t updates = 0;
  size_t open_at_exit = 0;
};

// "N" -> {SYM0001..SYMn}; anything else is a file with one symbol per line
// (blank lines and lines starting with '#' skipped).
Result<std::unordered_set<std::string>> parse_symbol_list(const std::string& spec);
// The symbol a topic asks for: its last level.
std::string_view symbol_of(std::string_view topic);

class MarketProvider {
 public:
  MarketProvider(client::Client& client, DemoMarket& market, MarketProviderOptions options);

  // Sends PROVIDE and waits until the broker has processed it; an error when the broker refused it.
  Status start();
  // Serves until interrupted, --seconds, or a fatal broker error. Returns an exit code.
  int run();
  const MarketProviderSummary& summary() const { return summary_; }

 private:
  struct Open {
    uint32_t stream_id = 0;
    size_t symbol = 0;
  };

  void on_request(const client::Stream& stream);
  void on_release(const client::Stream& stream);
  void answer_requests();
  void publish_updates(uint64_t count);
  bool send(uint32_t stream_id, size_t size, bool image);
  size_t symbol_index(std::string_view symbol);
  void forget(uint32_t stream_id);

  client::Client& client_;
  DemoMarket& market_;
  MarketProviderOptions options_;
  std::unordered_map<std::string, size_t> symbol_by_name_;
  std::vector<Open> requested_;  // waiting for their image, sent from the loop
  std::vector<Open> open_;       // image sent: they get updates
  size_t cursor_ = 0;
  std::vector<uint8_t> buffer_ = std::vector<uint8_t>(1024);  // one reused payload buffer
  MarketProviderSummary summary_;
  bool fatal_ = false;
  std::string refusal_;  // the broker's answer to a refused PROVIDE
};

}  // namespace tw::cli
