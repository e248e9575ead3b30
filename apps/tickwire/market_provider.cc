#include "market_provider.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>

#include "base/clock.h"
#include "common.h"

namespace tw::cli {

namespace {

constexpr size_t kMaxBatch = 4096;  // updates between polls, so requests and heartbeats keep flowing
constexpr int kStartTimeoutMs = 5'000;

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string trimmed(const std::string& line) {
  size_t b = line.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  size_t e = line.find_last_not_of(" \t\r");
  return line.substr(b, e - b + 1);
}

}  // namespace

Result<std::unordered_set<std::string>> parse_symbol_list(const std::string& spec) {
  std::unordered_set<std::string> symbols;
  if (all_digits(spec)) {
    if (spec.size() > 7) return Error{"--symbols " + spec + ": too many symbols"};
    unsigned long n = std::stoul(spec);
    for (unsigned long i = 1; i <= n; ++i) {
      char name[24];
      std::snprintf(name, sizeof name, "SYM%04lu", i);
      symbols.insert(name);
    }
    return symbols;
  }
  std::ifstream in(spec);
  if (!in) return Error{"cannot read symbol file '" + spec + "'"};
  std::string line;
  while (std::getline(in, line)) {
    std::string symbol = trimmed(line);
    if (!symbol.empty() && symbol[0] != '#') symbols.insert(std::move(symbol));
  }
  return symbols;
}

std::string_view symbol_of(std::string_view topic) {
  size_t slash = topic.rfind('/');
  return slash == std::string_view::npos ? topic : topic.substr(slash + 1);
}

MarketProvider::MarketProvider(client::Client& client, DemoMarket& market, MarketProviderOptions options)
    : client_(client), market_(market), options_(std::move(options)) {
  for (size_t i = 0; i < market_.size(); ++i) symbol_by_name_.emplace(market_.symbol(i), i);
}

// The broker's refusal of PROVIDE (not entitled, a bad pattern) arrives
// before the listing that serves as the barrier: start() fails with it, so
// the command never says "serving" for a service it does not serve.
Status MarketProvider::start() {
  client_.on_error([this](const client::ErrorInfo& e) {
    std::fprintf(stderr, "%s: broker error %s: %.*s\n", options_.name.c_str(), wire::code_name(e.code),
                 static_cast<int>(e.text.size()), e.text.data());
    if (e.request_id != 0) {  // a refused PROVIDE: nothing left to serve
      fatal_ = true;
      refusal_ = std::string(wire::code_name(e.code)) + ": " + std::string(e.text);
    }
  });
  auto provided = client_.provide(
      options_.service, options_.pattern, [this](const client::Stream& s) { on_request(s); },
      [this](const client::Stream& s) { on_release(s); });
  if (!provided) return provided.error();
  // The broker answers in order: once the listing is back, PROVIDE was processed.
  auto barrier = client_.list_channels(options_.service, kStartTimeoutMs);
  if (fatal_) return Error{"the broker refused to let this client provide " + options_.service + " (" + refusal_ + ")"};
  if (!barrier) return barrier.error();
  return Ok{};
}

void MarketProvider::on_request(const client::Stream& stream) {
  ++summary_.requests;
  std::string_view symbol = symbol_of(stream.topic);
  if (options_.known_symbols && !options_.known_symbols->count(std::string(symbol))) {
    ++summary_.not_found;
    (void)client_.stream_status(stream.id, wire::ChannelState::Closed, wire::Code::NotFound, "unknown symbol");
    if (options_.log_streams)
      std::fprintf(stderr, "%s: request %.*s -> NOT_FOUND\n", options_.name.c_str(),
                   static_cast<int>(stream.topic.size()), stream.topic.data());
    return;
  }
  if (options_.log_streams)
    std::fprintf(stderr, "%s: request %.*s (stream %u)\n", options_.name.c_str(),
                 static_cast<int>(stream.topic.size()), stream.topic.data(), stream.id & ~wire::kStreamIdBit);
  forget(stream.id);  // a re-request of an id starts over with an image
  requested_.push_back(Open{stream.id, symbol_index(symbol)});
}

void MarketProvider::on_release(const client::Stream& stream) {
  ++summary_.releases;
  forget(stream.id);
  if (options_.log_streams)
    std::fprintf(stderr, "%s: release %.*s (stream %u)\n", options_.name.c_str(),
                 static_cast<int>(stream.topic.size()), stream.topic.data(), stream.id & ~wire::kStreamIdBit);
}

void MarketProvider::forget(uint32_t stream_id) {
  auto same = [stream_id](const Open& o) { return o.stream_id == stream_id; };
  std::erase_if(requested_, same);
  std::erase_if(open_, same);
}

size_t MarketProvider::symbol_index(std::string_view symbol) {
  auto it = symbol_by_name_.find(std::string(symbol));
  if (it != symbol_by_name_.end()) return it->second;
  size_t index = market_.add_symbol(symbol);
  symbol_by_name_.emplace(std::string(symbol), index);
  return index;
}

// Waits out back pressure; gives up when the stream ended meanwhile (poll may release it).
bool MarketProvider::send(uint32_t stream_id, size_t size, bool image) {
  std::span<const uint8_t> payload(buffer_.data(), size);
  while (!client_.publish_stream(stream_id, payload, image)) {
    if (!client_.connected() || g_stop_requested || client_.poll(1) < 0) return false;
    bool still_open = std::any_of(open_.begin(), open_.end(), [&](const Open& o) { return o.stream_id == stream_id; }) ||
                      std::any_of(requested_.begin(), requested_.end(),
                                  [&](const Open& o) { return o.stream_id == stream_id; });
    if (!still_open) return false;
  }
  return true;
}

void MarketProvider::answer_requests() {
  while (!requested_.empty() && !g_stop_requested) {
    Open next = requested_.front();
    size_t n = market_.encode_image(next.symbol, buffer_, realtime_ns());
    if (!send(next.stream_id, n, true)) {
      forget(next.stream_id);
      continue;
    }
    forget(next.stream_id);
    open_.push_back(next);
    ++summary_.served;
    if (options_.log_images)
      std::fprintf(stderr, "%s: image %s (%zu bytes)\n", options_.name.c_str(), market_.symbol(next.symbol).c_str(), n);
  }
}

void MarketProvider::publish_updates(uint64_t count) {
  for (uint64_t k = 0; k < count && !open_.empty(); ++k) {
    cursor_ = (cursor_ + 1) % open_.size();
    Open target = open_[cursor_];
    size_t n = market_.next_update_for(target.symbol, buffer_, realtime_ns());
    if (send(target.stream_id, n, false)) ++summary_.updates;
  }
}

int MarketProvider::run() {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  uint64_t due_total = 0;
  while (!g_stop_requested && !fatal_) {
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (options_.seconds > 0 && elapsed >= options_.seconds) break;
    answer_requests();
    uint64_t target = options_.rate > 0 ? static_cast<uint64_t>(elapsed * options_.rate) : due_total + kMaxBatch;
    // Nothing to publish to, or far behind: skip ahead rather than burst later.
    if (open_.empty() || !client_.connected()) due_total = target;
    if (options_.rate > 0 && target > due_total + static_cast<uint64_t>(options_.rate)) due_total = target - kMaxBatch;
    uint64_t batch = std::min<uint64_t>(target > due_total ? target - due_total : 0, kMaxBatch);
    publish_updates(batch);
    due_total += batch;
    bool idle = open_.empty() || (due_total >= target && options_.rate > 0);
    int wait_ms = idle ? (options_.rate > 0 ? std::clamp(static_cast<int>(1000.0 / options_.rate), 1, 10) : 10) : 0;
    if (client_.poll(wait_ms) < 0) {
      std::fprintf(stderr, "%s: connection lost\n", options_.name.c_str());
      return kExitError;
    }
  }
  summary_.open_at_exit = open_.size();
  return fatal_ ? kExitError : kExitOk;
}

}  // namespace tw::cli
