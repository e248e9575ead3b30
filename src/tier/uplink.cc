#include "tier/uplink.h"

#include <algorithm>

#include "broker/router.h"
#include "tickwire/fields/field_list.h"
#include "topic/topic.h"

namespace tw::tier {

namespace {
uint64_t request_key(uint32_t token, uint32_t request_id) { return (uint64_t{token} << 32) | request_id; }
}  // namespace

Uplink::Uplink(cache::ChannelDirectory& directory, std::vector<Link*> links, std::vector<Waker*> wakers)
    : directory_(directory), links_(std::move(links)), wakers_(std::move(wakers)),
      touched_(links_.size(), false),
      awaited_sent_(links_.size(), 0),
      awaited_applied_(links_.size(), 0),
      concerned_(links_.size(), false) {}

void Uplink::send(uint32_t gateway, const Record& r) {
  to(gateway).push(r);
  touched_[gateway] = true;
}

void Uplink::send_all(const Record& r) {
  for (uint32_t g = 0; g < links_.size(); ++g) send(g, r);
}

// A record whose effect an ACK promises (Interest, Provide, Withdraw): counted, so that settle() knows
// whether the gateway may not have applied it yet.
void Uplink::send_awaited(uint32_t gateway, const Record& r) {
  ++awaited_sent_[gateway];
  send(gateway, r);
}

void Uplink::send_awaited_all(const Record& r) {
  for (uint32_t g = 0; g < links_.size(); ++g) send_awaited(g, r);
}

void Uplink::interest(std::string_view pattern, bool add) {
  Record r{add ? Op::Interest : Op::Uninterest};
  r.a = pattern;
  // An exact topic lives on one gateway; a wildcard may cover channels of any.
  if (!add) return topic::is_wildcard(pattern) ? send_all(r) : send(directory_.shard_of(pattern), r);
  const bool everywhere = topic::is_wildcard(pattern);
  const uint32_t owner = everywhere ? 0 : directory_.shard_of(pattern);
  for (uint32_t g = 0; g < links_.size(); ++g) {
    if (!everywhere && g != owner) continue;
    count_one(links_[g]->interests_sent);  // before the record: a fence never misses it
    send_awaited(g, r);
  }
}

// Each ring is FIFO: a Settle sent after the Interest (or Provide, Withdraw)
// records reaches a gateway after them, and its Settled comes back once they
// are applied (and after the images they made the gateway send). A gateway
// with none of them in flight needs no Settle: this access point's interest
// in the patterns was sent earlier, and it has applied all of those.
bool Uplink::settle(broker::Outlet* outlet, std::span<const std::string_view> patterns, uint32_t request_id) {
  for (std::string_view pattern : patterns) {
    if (topic::is_wildcard(pattern)) {
      std::fill(concerned_.begin(), concerned_.end(), true);
      break;
    }
    concerned_[directory_.shard_of(pattern)] = true;
  }
  uint32_t answers = 0;
  for (uint32_t g = 0; g < links_.size(); ++g) {
    if (!concerned_[g]) continue;
    concerned_[g] = false;
    if (awaited_applied_[g] == awaited_sent_[g]) continue;
    Record r{Op::Settle};
    r.token = outlet->token;
    r.arg = request_id;
    r.id = awaited_sent_[g];
    send(g, r);
    ++answers;
  }
  if (answers == 0) return false;
  settling_[request_key(outlet->token, request_id)] += answers;
  return true;
}

bool Uplink::settled(uint32_t gateway, const Record& r) {
  // Wrap-around safe "later than": the echoes of one gateway come back in order.
  if (static_cast<int32_t>(r.id - awaited_applied_[gateway]) > 0) awaited_applied_[gateway] = r.id;
  auto it = settling_.find(request_key(r.token, r.arg));
  if (it == settling_.end() || --it->second > 0) return false;
  settling_.erase(it);
  return true;
}

broker::Outcome Uplink::advertise(std::string_view topic, wire::PayloadKind kind, cache::ChannelId& out,
                                  broker::Advertiser* by) {
  const bool hold = by && by->outlet;
  auto named = directory_.intern(topic, kind, !by || by->may_create, hold);
  if (named.result == cache::ChannelDirectory::Intern::KindMismatch) {
    return {wire::Code::KindMismatch, "topic already carries the other payload kind"};
  }
  if (named.result == cache::ChannelDirectory::Intern::Full) return {wire::Code::TooManyChannels, "channel limit reached"};
  if (named.result == cache::ChannelDirectory::Intern::NotCreated) {
    return {wire::Code::ChannelQuota, by->refusal};
  }
  if (by) by->created = named.created;
  out = named.id;
  // One hold per connection and channel, however many publish ids name it.
  if (hold && !held_[by->outlet->token].try_emplace(out, topic).second) directory_.release(topic);
  if (out >= kinds_.size()) kinds_.resize(out + 1024, 0);
  if (kinds_[out] == 0) {
    // The owner learns the topic before the first PUBLISH on the same ring.
    kinds_[out] = static_cast<uint8_t>(kind) + 1;
    Record r{Op::Advertise};
    r.id = out;
    r.a = topic;
    r.flags = static_cast<uint8_t>(kind);
    send(directory_.shard_of(out), r);
  }
  return {};
}

broker::Outcome Uplink::publish(cache::ChannelId id, std::span<const uint8_t> payload, bool image,
                                const broker::MessageOrigin& origin) {
  // A malformed field list fails its sender here, at once; the gateway is
  // told it was checked, so it does not check again.
  const bool field_list = id < kinds_.size() && kinds_[id] == static_cast<uint8_t>(wire::PayloadKind::FieldList) + 1;
  if (field_list && !fields::validate(payload)) return broker::payload_refusal(payload);
  Record r{Op::Publish};
  r.id = id;
  r.flags = (image ? kFlagImage : 0) | (field_list ? kFlagValidated : 0) | (origin.retain ? kFlagRetain : 0) |
            (origin.transient ? kFlagTransient : 0);
  r.token = origin.token;  // the publishing connection, when it must recognise its own messages
  r.bytes = payload;
  if (!origin.attributes.empty()) {
    r.flags |= kFlagAttributes;
    r.arg = static_cast<uint32_t>(origin.attributes.size());
    r.prefix = origin.attributes;  // written before the payload, no copy of their own
  }
  send(directory_.shard_of(id), r);
  return {};
}

broker::Outcome Uplink::provide(broker::Outlet* outlet, std::string_view service, std::string_view pattern) {
  auto& mine = provided_[outlet->token];
  if (std::find(mine.begin(), mine.end(), service) == mine.end()) mine.emplace_back(service);
  Record r{Op::Provide};
  r.token = outlet->token;
  r.a = service;
  r.b = pattern;
  const std::string_view name = outlet->name();
  r.bytes = {reinterpret_cast<const uint8_t*>(name.data()), name.size()};
  send_awaited_all(r);
  return {};
}

broker::Outcome Uplink::withdraw(broker::Outlet* outlet, std::string_view service) {
  auto it = provided_.find(outlet->token);
  auto pos = it == provided_.end() ? decltype(it->second.end()){}
                                   : std::find(it->second.begin(), it->second.end(), service);
  if (it == provided_.end() || pos == it->second.end()) {
    return {wire::Code::NotFound, "this connection does not provide that service"};
  }
  it->second.erase(pos);
  Record r{Op::Withdraw};
  r.token = outlet->token;
  r.a = service;
  send_awaited_all(r);
  return {};
}

void Uplink::provider_publish(broker::Outlet* outlet, cache::ChannelId id, std::span<const uint8_t> payload,
                              bool image) {
  Record r{Op::ProviderPublish};
  r.token = outlet->token;
  r.id = id;
  r.flags = (image ? kFlagImage : 0) | kFlagValidated;  // Router::provider_publish validated it
  r.bytes = payload;
  send(directory_.shard_of(id), r);
}

void Uplink::provider_status(broker::Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                             std::string_view text) {
  send_status(outlet, id, state, code, text, 0);
}

// The same record as a provider's, flagged: the gateway checks the outlet publishes the channel.
void Uplink::publisher_status(broker::Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                              std::string_view text) {
  send_status(outlet, id, state, code, text, kFlagPublisherStatus);
}

void Uplink::send_status(broker::Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                         std::string_view text, uint8_t flags) {
  Record r{Op::ProviderStatus};
  r.token = outlet->token;
  r.id = id;
  r.state = state;
  r.code = code;
  r.flags = flags;
  r.a = text;
  send(directory_.shard_of(id), r);
}

void Uplink::snapshot(broker::Outlet* outlet, std::string_view topic, uint32_t request_id) {
  Record r{Op::Snapshot};
  r.token = outlet->token;
  r.arg = request_id;
  r.a = topic;
  awaiting_[request_key(outlet->token, request_id)] = 1;
  send(directory_.shard_of(topic), r);
}

void Uplink::list_channels(broker::Outlet* outlet, std::string_view service, uint32_t request_id, uint32_t shard,
                           cache::ChannelId from) {
  Record r{Op::ListChannels};
  r.token = outlet->token;
  r.arg = request_id;
  r.id = from;
  r.a = service;
  send(shard, r);
}

bool Uplink::request_done(uint32_t token, uint32_t request_id) {
  auto it = awaiting_.find(request_key(token, request_id));
  if (it == awaiting_.end()) return false;
  if (--it->second > 0) return false;
  awaiting_.erase(it);
  return true;
}

void Uplink::outlet_gone(broker::Outlet* outlet) {
  const uint32_t token = outlet->token;
  provided_.erase(token);
  release_holds(token);
  std::erase_if(awaiting_, [&](const auto& kv) { return (kv.first >> 32) == token; });
  std::erase_if(settling_, [&](const auto& kv) { return (kv.first >> 32) == token; });
  Record r{Op::OutletGone};
  r.token = token;
  send_all(r);
}

// The owning gateway frees a channel nobody holds, subscribes or provides
// (docs/configuration.md, channel_linger_ms); it learns here that the last
// publisher hold went.
void Uplink::release_holds(uint32_t token) {
  auto it = held_.find(token);
  if (it == held_.end()) return;
  for (const auto& [id, topic] : it->second) {
    if (!directory_.release(topic)) continue;
    Record r{Op::Unheld};
    r.id = id;
    send(directory_.shard_of(id), r);
  }
  held_.erase(it);
}

void Uplink::subscribers_changed(cache::ChannelId id, uint32_t count) {
  Record r{Op::SubscriberCount};
  r.id = id;
  r.arg = count;
  send(directory_.shard_of(id), r);
}

void Uplink::flush() {
  for (uint32_t g = 0; g < links_.size(); ++g) {
    if (!touched_[g] && to(g).spilled_bytes() == 0) continue;
    to(g).drain_spill();
    wakers_[g]->notify();
    touched_[g] = false;
  }
}

size_t Uplink::backlog() const {
  size_t n = 0;
  for (Link* link : links_) n += link->to_gateway.spilled_bytes();
  return n;
}

}  // namespace tw::tier
