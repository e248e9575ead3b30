// Interactive providers: requesting, releasing, failing over and closing
// channels on demand (the state diagram is in docs/ARCHITECTURE.md).
#include "broker/interactive_services.h"

#include <algorithm>

#include "broker/subscribers.h"
#include "tickwire/fields/field_list.h"

namespace tw::broker {

namespace {
constexpr uint64_t kNsPerMs = 1'000'000ull;
}  // namespace

InteractiveServices::InteractiveServices(const RouterLimits& limits, const Clock& clock,
                                         cache::ChannelTable& channels, RouterStats& stats, ChannelKeeper& keeper)
    : limits_(limits), clock_(clock), channels_(channels), stats_(stats), keeper_(keeper) {}

InteractiveServices::~InteractiveServices() = default;

void InteractiveServices::created(const cache::Channel& ch) {
  if (streams_.size() < ch.id) streams_.resize(channels_.id_limit() - 1);
}

void InteractiveServices::freed(const cache::Channel& ch) {
  if (Service* s = interactive_service(ch.topic)) s->orphans.erase(ch.id);
  stream(ch) = Stream{};
}

bool InteractiveServices::busy(const cache::Channel& ch) const {
  const Stream& r = stream(ch);
  return r.provider || r.pending || r.linger_until_ns != 0;
}

bool InteractiveServices::listed(const cache::Channel& ch) const {
  const Stream& r = stream(ch);
  return !r.interactive || r.provider || r.pending || subscribers_->exact_refs(ch) > 0;
}

std::string_view InteractiveServices::provider_name(const cache::Channel& ch) const {
  const Stream& r = stream(ch);
  return r.provider ? r.provider->outlet->name() : std::string_view{};
}

Outcome InteractiveServices::open(Outlet* by, std::string_view topic) {
  Service* service = interactive_service(topic);
  if (!service || open_exact(by, topic, *service)) return {};
  return {wire::Code::TooManyChannels, "channel limit reached"};
}

void InteractiveServices::attached(cache::Channel& ch, bool exact) {
  Stream& r = stream(ch);
  if (!exact || r.linger_until_ns == 0) return;
  r.linger_until_ns = 0;
  lingering_.erase(ch.id);
}

void InteractiveServices::detached(cache::Channel& ch, bool exact) {
  Stream& r = stream(ch);
  if (!exact || subscribers_->exact_refs(ch) > 0 || !r.interactive) return;
  if (r.provider || r.pending) {
    r.linger_until_ns = clock_() + limits_.release_linger_ms * kNsPerMs;
    lingering_.insert(ch.id);
  } else if (Service* s = interactive_service(ch.topic)) {
    s->orphans.erase(ch.id);  // nobody waits for it any more
  }
}

void InteractiveServices::outlet_gone(Outlet* outlet) {
  for (auto it = services_.begin(); it != services_.end(); ++it) {
    Service& service = *it->second;
    if (Provider* p = service.find(outlet)) lose_provider(p);
  }
}

void InteractiveServices::close_by_admin(cache::Channel& ch) {
  detach_provider(ch, /*send_release=*/true);  // the provider is told, as when its last subscriber leaves
  close_channel(ch, wire::Code::ClosedByAdmin, "closed by an administrator");
}

Service* InteractiveServices::interactive_service(std::string_view topic) {
  auto it = services_.find(std::string(topic::service_of(topic)));
  return it == services_.end() ? nullptr : it->second.get();
}

bool InteractiveServices::owns(Outlet* outlet, const cache::Channel& ch) const {
  const Stream& r = stream(ch);
  return r.provider && r.provider->outlet == outlet;
}

Outcome InteractiveServices::provide(Outlet* outlet, std::string_view service, std::string_view pattern) {
  ProviderOutlet* requests = outlet->as_provider();
  if (!requests) return {wire::Code::UnknownType, "this connection's protocol cannot provide services"};
  auto& slot = services_[std::string(service)];
  if (!slot) {
    slot = std::make_unique<Service>();
    slot->name = std::string(service);
  }
  Service& s = *slot;
  Provider* p = s.find(outlet);
  if (!p) {
    s.providers.push_back(std::make_unique<Provider>());
    p = s.providers.back().get();
    p->outlet = outlet;
    p->requests = requests;
    p->service = s.name;
  }
  p->pattern = std::string(pattern);
  // Channels that lost every provider recover as soon as one arrives.
  std::vector<cache::ChannelId> waiting(s.orphans.begin(), s.orphans.end());
  for (cache::ChannelId id : waiting) {
    cache::Channel& ch = *channels_.get(id);
    if (subscribers_->exact_refs(ch) > 0) request(ch, s);
  }
  open_waiting_subscriptions(s);
  return {};
}

bool InteractiveServices::open_exact(Outlet* requester, std::string_view topic, Service& service) {
  cache::Channel* ch = channels_.find(topic);
  if (!ch) ch = keeper_.create_channel(topic, wire::PayloadKind::FieldList);
  if (!ch) return false;
  open_interactive(*ch, service, requester);
  return true;
}

// Exact subscriptions made while the service had no provider have no channel
// yet (after a broker restart, a subscriber may reconnect before its
// provider): they are requested as soon as a provider arrives, as if they
// had been made now. Existing channels are not touched: a broadcast channel
// keeps its publisher, an interactive one is open or waits as an orphan.
void InteractiveServices::open_waiting_subscriptions(Service& service) {
  std::vector<std::pair<std::string, Outlet*>> waiting;
  subscribers_->for_each_exact_under(service.name, [&](std::string_view topic, Outlet* outlet) {
    if (!waiting.empty() && waiting.back().first == topic) return;  // one request per topic
    if (!channels_.find(topic)) waiting.emplace_back(std::string(topic), outlet);
  });
  for (const auto& [topic, outlet] : waiting) {
    // At the channel limit the rest keep waiting, for the next provider to arrive.
    if (!open_exact(outlet, topic, service)) break;
  }
}

Outcome InteractiveServices::withdraw(Outlet* outlet, std::string_view service) {
  auto it = services_.find(std::string(service));
  Provider* p = it == services_.end() ? nullptr : it->second->find(outlet);
  if (!p) return {wire::Code::NotFound, "this connection does not provide that service"};
  lose_provider(p);
  return {};
}

void InteractiveServices::open_interactive(cache::Channel& ch, Service& service, Outlet* requester) {
  Stream& r = stream(ch);
  r.interactive = true;
  if (r.provider || r.pending || service.orphans.count(ch.id)) return;  // open, or waiting for a provider
  auto nf = not_found_until_.find(ch.topic);
  if (nf != not_found_until_.end() && nf->second > clock_()) {
    ++stats_.not_found_cached;
    requester->send_status(ch, wire::ChannelState::Closed, wire::Code::NotFound, "not found (recent answer)", true);
    subscribers_->unsubscribe(requester, ch.topic);
    return;
  }
  if (!request(ch, service)) {
    service.orphans.insert(ch.id);
    subscribers_->status(ch, wire::ChannelState::Stale, wire::Code::NoProvider, "no provider can serve this topic");
  }
}

bool InteractiveServices::request(cache::Channel& ch, Service& service) {
  Stream& r = stream(ch);
  Provider* p = choose_provider(service, ch, r);
  if (!p) return false;
  p->channels.insert(ch.id);
  balance_->note_load(*p);
  r.provider = p;
  r.pending = true;
  r.deadline_ns = clock_() + limits_.request_timeout_ms * kNsPerMs;
  pending_.insert(ch.id);
  service.orphans.erase(ch.id);
  ++stats_.requests;
  p->requests->send_request(wire::kStreamIdBit | ch.id, ch.topic);
  return true;
}

Provider* InteractiveServices::choose_provider(Service& service, const cache::Channel& ch, const Stream& r) {
  auto eligible = [&](const Provider& p) {
    return p.can_serve(ch.topic) && std::find(r.tried.begin(), r.tried.end(), p.outlet) == r.tried.end();
  };
  if (limits_.balance == Balance::RoundRobin) return balance_->next_turn(service, eligible);
  Provider* best = nullptr;
  uint32_t best_load = 0;
  for (const auto& p : service.providers) {
    if (!eligible(*p)) continue;
    const uint32_t load = balance_->load_of(*p);
    if (!best || load < best_load) {
      best = p.get();
      best_load = load;
    }
  }
  return best;
}

void InteractiveServices::detach_provider(cache::Channel& ch, bool send_release) {
  Stream& r = stream(ch);
  if (r.provider) {
    r.provider->channels.erase(ch.id);
    balance_->note_load(*r.provider);
    if (send_release) {
      r.provider->requests->send_release(wire::kStreamIdBit | ch.id);
      ++stats_.releases;
    }
  }
  r.provider = nullptr;
  r.tried.clear();
  if (r.pending) {
    r.pending = false;
    pending_.erase(ch.id);
  }
  if (r.linger_until_ns) {
    r.linger_until_ns = 0;
    lingering_.erase(ch.id);
  }
}

// The channel's stream is over: subscribers get CLOSED, exact subscriptions
// to it end, the cache is dropped (Subscribers::end_streams).
void InteractiveServices::close_channel(cache::Channel& ch, wire::Code code, std::string_view text) {
  detach_provider(ch, false);
  if (Service* s = interactive_service(ch.topic)) s->orphans.erase(ch.id);
  subscribers_->end_streams(ch, code, text);
}

void InteractiveServices::lose_provider(Provider* provider) {
  Service& service = *services_.at(provider->service);
  std::vector<cache::ChannelId> served(provider->channels.begin(), provider->channels.end());
  std::sort(served.begin(), served.end());
  for (cache::ChannelId id : served) detach_provider(*channels_.get(id), false);
  service.remove(provider);  // provider is gone from here on
  for (cache::ChannelId id : served) {
    cache::Channel& ch = *channels_.get(id);
    if (subscribers_->exact_refs(ch) == 0) {
      ch.clear_image();
      subscribers_->reset_delayed(ch);
      keeper_.consider_freeing(ch);
      continue;
    }
    ++stats_.failovers;
    subscribers_->status(ch, wire::ChannelState::Stale, wire::Code::ProviderLost, "provider lost");
    if (!request(ch, service)) service.orphans.insert(id);
  }
}

Outcome InteractiveServices::provider_publish(Outlet* outlet, cache::ChannelId id, std::span<const uint8_t> payload, bool image,
                                 fields::Checked checked) {
  cache::Channel* ch = channels_.get(id);
  if (!ch || !owns(outlet, *ch)) {
    ++stats_.stray_provider_messages;
    return {wire::Code::NotFound, "message for a channel this provider was not asked for"};
  }
  Stream& r = stream(*ch);
  if (r.pending && !image) {
    ++stats_.stray_provider_messages;
    return {wire::Code::NotFound, "UPDATE before the IMAGE of a requested channel"};
  }
  const bool recovering = ch->state != wire::ChannelState::Ok;
  if (!ch->apply(payload, image, checked)) {
    ++stats_.bad_payloads;
    return payload_refusal(payload);
  }
  if (r.pending) {
    r.pending = false;
    r.tried.clear();
    pending_.erase(id);
  }
  ++stats_.publishes;
  subscribers_->fan_out(*ch, payload, image);
  if (recovering && image) subscribers_->status(*ch, wire::ChannelState::Ok, wire::Code::Ok, "recovered");
  return {};
}

Outcome InteractiveServices::provider_status(Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                                std::string_view text) {
  cache::Channel* ch = channels_.get(id);
  if (!ch || !owns(outlet, *ch)) {
    ++stats_.stray_provider_messages;
    return {wire::Code::NotFound, "status for a channel this provider was not asked for"};
  }
  if (state == wire::ChannelState::Closed) {
    if (code == wire::Code::NotFound) {
      not_found_until_[ch->topic] = clock_() + limits_.not_found_ttl_ms * kNsPerMs;
    }
    close_channel(*ch, code, text);
  } else {
    subscribers_->status(*ch, state, code, text);
  }
  return {};
}

void InteractiveServices::expire_requests(uint64_t now) {
  std::vector<cache::ChannelId> due;
  for (cache::ChannelId id : pending_) {
    if (streams_[id - 1].deadline_ns <= now) due.push_back(id);
  }
  std::sort(due.begin(), due.end());
  for (cache::ChannelId id : due) {
    cache::Channel& ch = *channels_.get(id);
    Stream& r = stream(ch);
    ++stats_.request_timeouts;
    Provider* slow = r.provider;
    slow->channels.erase(id);
    balance_->note_load(*slow);
    slow->requests->send_release(wire::kStreamIdBit | id);
    r.tried.push_back(slow->outlet);
    r.provider = nullptr;
    r.pending = false;
    pending_.erase(id);
    Service& service = *services_.at(slow->service);
    if (request(ch, service)) continue;  // the next provider gets its turn
    if (ch.has_data()) {
      r.tried.clear();
      service.orphans.insert(id);  // stays STALE until a provider arrives
    } else {
      close_channel(ch, wire::Code::RequestTimeout, "no provider answered the request");
    }
  }
}

void InteractiveServices::release_lingering(uint64_t now) {
  std::vector<cache::ChannelId> due;
  for (cache::ChannelId id : lingering_) {
    if (streams_[id - 1].linger_until_ns <= now) due.push_back(id);
  }
  for (cache::ChannelId id : due) {
    cache::Channel& ch = *channels_.get(id);
    if (subscribers_->exact_refs(ch) > 0) continue;
    detach_provider(ch, true);
    ch.clear_image();
    subscribers_->forget_images(ch);
    subscribers_->reset_delayed(ch);
    keeper_.consider_freeing(ch);
  }
}

void InteractiveServices::on_tick(uint64_t now) {
  if (!pending_.empty()) expire_requests(now);
  if (!lingering_.empty()) release_lingering(now);
  for (auto it = not_found_until_.begin(); it != not_found_until_.end();) {
    it = it->second <= now ? not_found_until_.erase(it) : std::next(it);
  }
}

std::vector<std::pair<std::string, uint32_t>> InteractiveServices::provider_loads(std::string_view service) const {
  std::vector<std::pair<std::string, uint32_t>> loads;
  auto it = services_.find(std::string(service));
  if (it == services_.end()) return loads;
  for (const auto& p : it->second->providers) loads.emplace_back(std::string(p->outlet->name()), p->open());
  return loads;
}

}  // namespace tw::broker
