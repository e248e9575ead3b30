#include "tier/broker_link.h"

#include <chrono>

#include "base/affinity.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/rate_limit.h"
#include "tickwire/client/client.h"
#include "tickwire/client/options.h"

namespace tw::tier {

namespace {

constexpr int kTickMs = 20;  // how often the thread looks at interest changes and lingers

uint64_t now_ms() { return monotonic_ns() / 1'000'000; }

void bump(std::atomic<uint64_t>& counter) { counter.fetch_add(1, std::memory_order_relaxed); }

// "N messages dropped": N, or 1 when the text does not start with a count.
uint64_t leading_count(std::string_view text) {
  uint64_t n = 0;
  for (size_t i = 0; i < text.size() && i < 19 && text[i] >= '0' && text[i] <= '9'; ++i) n = n * 10 + (text[i] - '0');
  return n == 0 ? 1 : n;
}

}  // namespace

BrokerLink::BrokerLink(config::LinkConfig config) : config_(std::move(config)) {
  backoff_ms_ = config_.reconnect_min_ms;
  address_ = config_.upstreams.front();
}

BrokerLink::~BrokerLink() { stop(); }

void BrokerLink::interest(std::string_view pattern, bool add) {
  std::lock_guard lock(changes_mutex_);
  changes_.push_back({std::string(pattern), add});
}

void BrokerLink::start(std::string local_host, uint16_t local_port) {
  local_host_ = std::move(local_host);
  local_port_ = local_port;
  thread_ = std::thread([this] { run(); });
}

void BrokerLink::stop() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
}

LinkState BrokerLink::state() const {
  LinkState s;
  s.name = config_.name;
  {
    std::lock_guard lock(address_mutex_);
    s.upstream = address_;
  }
  auto get = [](const std::atomic<uint64_t>& c) { return c.load(std::memory_order_relaxed); };
  s.connected = connected_.load(std::memory_order_relaxed);
  s.patterns = patterns_.load(std::memory_order_relaxed);
  s.channels = get(channels_);
  s.images = get(images_);
  s.updates = get(updates_);
  s.statuses = get(statuses_);
  s.gaps = get(gaps_);
  s.refused = get(refused_);
  s.connects = get(connects_);
  s.failed_connects = get(failed_connects_);
  s.published_upstream = get(published_upstream_);
  return s;
}

// One turn every kTickMs at most: interest first (so a new pattern goes
// upstream at once when connected), then whatever the upstream sent, which
// is published into this broker before the next wait.
void BrokerLink::run() {
  name_current_thread("tw-link-" + config_.name);
  if (!connect_local()) return;
  while (!stopping_.load(std::memory_order_relaxed)) {
    const uint64_t now = now_ms();
    take_changes(now);
    expire_lingers(now);
    if (!upstream_ && now >= retry_at_ms_) connect_upstream(now);
    if (upstream_) {
      upstream_->poll(kTickMs);
      if (!upstream_->connected()) upstream_lost(now_ms());
      refresh_patterns();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(kTickMs));
    }
    local_->poll(0);
  }
  if (upstream_) upstream_->close();
  local_->close();
}

// The local side reconnects by itself (libtickwire's backoff) once it has connected.
bool BrokerLink::connect_local() {
  client::Options options;
  options.host = local_host_;
  options.port = local_port_;
  options.client_name = "link:" + config_.name;
  options.user = config_.local_user;
  if (!config_.local_password_file.empty()) {
    auto password = client::resolve_password(config_.local_password_file);
    if (!password) {
      TW_ERROR("link %s: local_password_file: %s", config_.name.c_str(), password.error().message.c_str());
      return false;
    }
    options.password = *password;
  }
  local_ = std::make_unique<client::Client>();
  while (!stopping_.load(std::memory_order_relaxed)) {
    auto connected = local_->connect(options);
    if (connected) return true;
    TW_WARN_LIMITED("link %s: cannot publish into this broker (%s:%u): %s", config_.name.c_str(),
                    local_host_.c_str(), static_cast<unsigned>(local_port_), connected.error().message.c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// Counts every local subscription per pattern: the first subscribes upstream,
// the last lets it linger (a subscriber that flaps costs the upstream nothing).
void BrokerLink::take_changes(uint64_t now) {
  std::vector<Change> changes;
  {
    std::lock_guard lock(changes_mutex_);
    changes.swap(changes_);
  }
  for (const Change& c : changes) {
    auto own = own_interest_.find(c.pattern);
    uint32_t* own_count = own == own_interest_.end() ? nullptr : c.add ? &own->second.adds : &own->second.removes;
    if (own_count != nullptr && *own_count > 0) {
      --*own_count;  // the link's own publish_upstream subscription
      continue;
    }
    uint32_t& count = counts_[c.pattern];
    if (c.add) {
      if (count++ == 0 && lingering_.erase(c.pattern) == 0) subscribe_upstream(c.pattern);
      continue;
    }
    if (count == 0 || --count > 0) continue;
    counts_.erase(c.pattern);
    lingering_[c.pattern] = now + config_.linger_ms;
  }
}

void BrokerLink::expire_lingers(uint64_t now) {
  for (auto it = lingering_.begin(); it != lingering_.end();) {
    if (it->second > now) {
      ++it;
      continue;
    }
    subscribed_.erase(it->first);
    if (upstream_) (void)upstream_->unsubscribe(it->first);
    it = lingering_.erase(it);
  }
  patterns_.store(static_cast<uint32_t>(subscribed_.size()), std::memory_order_relaxed);
}

void BrokerLink::subscribe_upstream(const std::string& pattern) {
  subscribed_.insert(pattern);
  if (!upstream_) return;  // subscribed when the connection comes
  auto sub = upstream_->subscribe(pattern, [this](const client::Message& m) { on_upstream(m); });
  if (!sub) TW_WARN("link %s: subscribe %s: %s", config_.name.c_str(), pattern.c_str(), sub.error().message.c_str());
  if (sub) sub_patterns_[*sub] = pattern;
}

// Each hop numbers its channels itself, so an upstream gap would vanish here:
// the channel goes STALE (its subscribers, and the next hop's link, learn it)
// and the pattern is subscribed afresh, whose IMAGE replaces what was lost,
// then OK: the recovery a lost link gets. The text starts with the count, as
// a MESSAGES_DROPPED notice's does.
void BrokerLink::gap_seen(const client::Message& m, uint64_t lost) {
  bump(gaps_);
  Topic* t = topic_of(m);
  if (t == nullptr || t->stale) return;
  const std::string text = std::to_string(lost) + " messages lost upstream of link " + config_.name + ", refreshing";
  t->stale = local_->channel_status(t->publish_id, wire::ChannelState::Stale, wire::Code::MessagesDropped, text).ok();
  if (auto it = sub_patterns_.find(m.subscription_id); it != sub_patterns_.end()) refresh_.insert(it->second);
}

// Outside the handlers: UNSUBSCRIBE then SUBSCRIBE on the same connection, so
// the fresh IMAGEs come in order with the updates that follow them.
void BrokerLink::refresh_patterns() {
  if (refresh_.empty() || !upstream_) return;
  for (const std::string& pattern : refresh_) {
    if (!subscribed_.contains(pattern)) continue;
    std::erase_if(sub_patterns_, [&](const auto& entry) { return entry.second == pattern; });
    (void)upstream_->unsubscribe(pattern);
    subscribe_upstream(pattern);
  }
  refresh_.clear();
}

// A fresh client per connection: it subscribes every pattern of the moment,
// and the upstream answers each with its images.
void BrokerLink::connect_upstream(uint64_t now) {
  const std::string& address = config_.upstreams[next_upstream_];
  {
    std::lock_guard lock(address_mutex_);
    address_ = address;
  }
  client::Options options;
  if (!client::parse_server_address(address, options.host, options.port)) return;
  options.client_name = "link:" + config_.name;
  options.reconnect = false;  // the link fails over to the next address itself
  options.connect_timeout_ms = 2'000;
  options.tls = config_.tls;
  options.ca = config_.ca;
  options.cert = config_.cert;
  options.key = config_.key;
  options.user = config_.user;
  if (!config_.password_file.empty()) {
    auto password = client::resolve_password(config_.password_file);
    if (!password) TW_WARN_LIMITED("link %s: password_file: %s", config_.name.c_str(), password.error().message.c_str());
    if (password) options.password = *password;
  }
  auto up = std::make_unique<client::Client>();
  up->on_error([this](const client::ErrorInfo& e) {
    TW_WARN("link %s: upstream refused %.*s: %.*s", config_.name.c_str(), static_cast<int>(e.subject.size()),
            e.subject.data(), static_cast<int>(e.text.size()), e.text.data());
  });
  sub_patterns_.clear();
  refresh_.clear();  // the connection's images refresh everything
  for (const std::string& pattern : subscribed_) {
    auto sub = up->subscribe(pattern, [this](const client::Message& m) { on_upstream(m); });
    if (sub) sub_patterns_[*sub] = pattern;
  }
  if (auto connected = up->connect(options); !connected) {
    bump(failed_connects_);
    TW_WARN_LIMITED("link %s: %s: %s", config_.name.c_str(), address.c_str(), connected.error().message.c_str());
    next_upstream_ = (next_upstream_ + 1) % config_.upstreams.size();
    retry_at_ms_ = now + backoff_ms_;
    backoff_ms_ = std::min(backoff_ms_ * 2, config_.reconnect_max_ms);
    return;
  }
  TW_INFO("link %s: connected to %s", config_.name.c_str(), address.c_str());
  pushed_.clear();
  bump(connects_);
  backoff_ms_ = config_.reconnect_min_ms;
  upstream_ = std::move(up);
  connected_.store(true, std::memory_order_relaxed);
  subscribe_local();  // this broker's images go up afresh on the new connection
}

// Publishing toward the core: the link subscribes here to each
// publish_upstream pattern (afresh after each upstream connection, so that
// every channel's IMAGE goes up first).
void BrokerLink::subscribe_local() {
  for (const std::string& pattern : config_.publish_upstream) {
    OwnInterest& own = own_interest_[pattern];
    if (local_->unsubscribe(pattern).ok()) ++own.removes;
    ++own.adds;
    auto sub = local_->subscribe(pattern, [this](const client::Message& m) { on_local(m); });
    if (!sub) TW_WARN("link %s: publish_upstream %s: %s", config_.name.c_str(), pattern.c_str(), sub.error().message.c_str());
  }
}

// Loops: what a link brought in here is never published upstream (it has an
// origin elsewhere), and what this link publishes upstream is not brought
// back down (on_upstream skips it): docs/ARCHITECTURE.md, "Loops".
void BrokerLink::on_local(const client::Message& m) {
  if (!upstream_ || m.topic.empty() || topics_.contains(std::string(m.topic))) return;
  auto it = pushed_.find(std::string(m.topic));
  if (it == pushed_.end()) {
    auto id = upstream_->advertise(m.topic, m.payload_kind);
    if (!id) return;
    it = pushed_.emplace(std::string(m.topic), *id).first;
  }
  if (m.kind == client::MessageKind::Status) {
    if (m.state != wire::ChannelState::Closed) (void)upstream_->channel_status(it->second, m.state, m.code, m.text);
    return;
  }
  const bool published = upstream_->publish(it->second, m.payload, m.kind == client::MessageKind::Image).ok();
  bump(published ? published_upstream_ : refused_);
}

// Every channel the link brought in goes STALE at once (its subscribers keep
// the image and know it is old); the next attempt goes to the next address.
void BrokerLink::upstream_lost(uint64_t now) {
  TW_WARN("link %s: lost %s", config_.name.c_str(), config_.upstreams[next_upstream_].c_str());
  for (auto& [topic, t] : topics_) {
    if (t.stale) continue;
    t.stale = local_->channel_status(t.publish_id, wire::ChannelState::Stale, wire::Code::ProviderLost,
                                     "link " + config_.name + " lost its upstream")
                  .ok();
  }
  upstream_.reset();
  connected_.store(false, std::memory_order_relaxed);
  next_upstream_ = (next_upstream_ + 1) % config_.upstreams.size();
  retry_at_ms_ = now;
}

// The upstream's images and updates are published here as they come; after
// a STALE the link said itself, the fresh image is followed by OK.
void BrokerLink::on_upstream(const client::Message& m) {
  if (!pushed_.empty() && pushed_.contains(std::string(m.topic))) return;  // our own, echoed
  if (m.kind == client::MessageKind::Status) return pass_status(m);
  const bool image = m.kind == client::MessageKind::Image;
  bump(image ? images_ : updates_);
  if (m.gap) gap_seen(m, m.seq > m.expected_seq ? m.seq - m.expected_seq : 1);
  Topic* t = topic_of(m);
  if (!t || !local_->publish(t->publish_id, m.payload, image)) return bump(refused_);
  if (!image || !t->stale) return;
  t->stale = !local_->channel_status(t->publish_id, wire::ChannelState::Ok, wire::Code::Ok, "").ok();
}

// An upstream provider's STALE and OK reach this broker's subscribers;
// CLOSED ends the upstream subscription only, the channel here keeps its image.
void BrokerLink::pass_status(const client::Message& m) {
  bump(statuses_);
  if (m.state == wire::ChannelState::Closed) return;
  // The upstream dropped messages for this link (its slow-consumer policy):
  // a gap, not a provider's state.
  if (m.code == wire::Code::MessagesDropped && m.state == wire::ChannelState::Ok) {
    return gap_seen(m, leading_count(m.text));
  }
  Topic* t = topic_of(m);
  if (t && !local_->channel_status(t->publish_id, m.state, m.code, m.text)) bump(refused_);
}

BrokerLink::Topic* BrokerLink::topic_of(const client::Message& m) {
  auto it = topics_.find(std::string(m.topic));
  if (it != topics_.end()) return &it->second;
  auto id = local_->advertise(m.topic, m.payload_kind);
  if (!id) return nullptr;
  channels_.store(topics_.size() + 1, std::memory_order_relaxed);
  return &topics_.emplace(std::string(m.topic), Topic{*id, false}).first->second;
}

}  // namespace tw::tier
