// Subscribers: delayed subscriptions (docs/ARCHITECTURE.md, "Delay"). A
// subscription with delay D gets the channel's stream as it was D ago. The
// first delayed subscriber of (channel, D) starts a DelayedStream: a
// DelayLine recording the channel from its current image on, a copy of the
// channel holding the delayed state under its own channel id
// (kDelayedChannelBit), and the stream's subscribers. Every message applied
// to the live channel is recorded (merged per bucket); on the router tick the
// due entries are applied to the copy and fanned out to its subscribers: an
// entry holding one message as that message (UPDATE, or IMAGE if published
// as one), an entry that merged several as a refresh IMAGE of the delayed
// state. Delayed subscribers are never in the real-time path; channel state
// changes (STALE, CLOSED) reach them at once, not delayed.
#include <algorithm>

#include "broker/subscribers.h"

namespace tw::broker {

namespace {
uint64_t ms_to_ns(uint64_t ms) { return ms * 1'000'000ull; }
}  // namespace

Subscribers::DelayedStream::DelayedStream(const cache::Channel& live, uint32_t delay, uint64_t bucket_ns,
                                     DelayBudget& budget)
    : source(live.id), delay_ms(delay), line(live.kind, ms_to_ns(delay), bucket_ns, budget) {
  copy.topic = live.topic;
  copy.kind = live.kind;
  copy.state = live.state;
}

cache::Channel* Subscribers::delayed_channel(cache::ChannelId id) {
  auto it = delayed_.find(id);
  return it == delayed_.end() ? nullptr : &it->second->copy;
}

const Subscribers::Entry* Subscribers::delayed_entry(const Outlet* outlet, cache::ChannelId id) const {
  auto it = delayed_.find(id);
  return it == delayed_.end() ? nullptr : find_entry(it->second->subscribers, outlet);
}

Outcome Subscribers::check_delay(uint32_t delay_ms) const {
  if (delay_ms == 0 || !delay_budget_.exhausted()) return {};
  return {wire::Code::DelayCapacity, "delayed data is over delay_max_bytes: no new delayed subscriptions"};
}

Subscribers::DelayedStream& Subscribers::delayed_stream(cache::Channel& ch, uint32_t delay_ms) {
  Watch& w = watch(ch);
  for (DelayedStream* d : w.delayed) {
    if (d->delay_ms == delay_ms) return *d;
  }
  const uint64_t bucket_ns = ms_to_ns(limits_.delay_bucket_ms);
  auto stream = std::make_unique<DelayedStream>(ch, delay_ms, bucket_ns, delay_budget_);
  // Ids are not reused, so an outlet's leftover state for an ended stream never meets a new one.
  stream->copy.id = ++last_delayed_id_;
  stream->started_ns = clock_();
  stream->line.start(ch, stream->started_ns);
  DelayedStream* d = stream.get();
  delayed_.emplace(d->copy.id, std::move(stream));
  w.delayed.push_back(d);
  return *d;
}

std::vector<Subscribers::Entry>& Subscribers::delayed_subscribers(cache::Channel& ch, uint32_t delay_ms) {
  for (DelayedStream* d : watch(ch).delayed) {
    if (d->delay_ms == delay_ms) return d->subscribers;
  }
  static std::vector<Entry> none;  // never written: a drop finds nobody in it
  return none;
}

bool Subscribers::add_delayed_ref(cache::Channel& ch, const PatternRef& ref) {
  DelayedStream& d = delayed_stream(ch, ref.delay_ms);
  // The delayed state, not the live one; none until the first entry is due.
  const bool added = attach(d.subscribers, d.copy, ref);
  if (added && !d.copy.has_data()) tell_history_starts(d, ch, *ref.outlet);
  return added;
}

// The broker records a channel for a delay from the first delayed
// subscription on, so the stream as it was D ago begins D after that: said
// at once, rather than leaving the subscriber D seconds of silence it cannot
// tell from a quiet channel.
void Subscribers::tell_history_starts(const DelayedStream& d, const cache::Channel& live, Outlet& outlet) {
  const uint64_t starts_ns = d.started_ns + ms_to_ns(d.delay_ms), now = clock_();
  const uint64_t in_s = starts_ns > now ? (starts_ns - now + 999'999'999) / 1'000'000'000 : 0;
  const std::string delay = std::to_string((d.delay_ms + 999) / 1000) + " s";
  // Without data here (a channel nobody published yet, or an access point's copy that its gateway has not
  // filled yet) the stream starts a delay after its first message: no sooner than that.
  const std::string text = "no delayed history yet: the stream as it was " + delay + " ago starts in " +
                           std::to_string(in_s) + " s" + (live.has_data() ? "" : " at the earliest");
  outlet.send_status(d.copy, d.copy.state, wire::Code::DelayHistory, text, true);
}

// [[delay_history]]: a channel under one is recorded for its delay from its
// creation, with no subscriber, so that a subscriber with that delay joins a
// stream that already holds the state as it was then. The recording counts as
// one subscriber: the owner keeps the channel (it is watched) and, on an
// access point, the gateway keeps sending it.
void Subscribers::keep_delay_history() {
  for (const config::DelayHistory& history : limits_.delay_history) {
    for (const std::string& pattern : history.topics) owner_.interest(pattern, true);
  }
}

void Subscribers::record_history(cache::Channel& ch) {
  bool recorded = false;
  for (const config::DelayHistory& history : limits_.delay_history) {
    for (const std::string& pattern : history.topics) {
      if (!topic::matches(pattern, ch.topic)) continue;
      delayed_stream(ch, history.delay_ms).history = true;
      recorded = true;
      break;
    }
  }
  if (recorded) owner_.attached(ch, false, true);
}

void Subscribers::drop_delayed_if_unwatched(cache::Channel& ch, uint32_t delay_ms) {
  auto& list = watch(ch).delayed;
  auto pos = std::find_if(list.begin(), list.end(), [&](const DelayedStream* d) { return d->delay_ms == delay_ms; });
  if (pos == list.end() || !(*pos)->subscribers.empty() || (*pos)->history) return;
  DelayedStream* d = *pos;
  list.erase(pos);
  delay_budget_.used -= d->copy_bytes;
  delayed_.erase(d->copy.id);  // its line gives its bytes back
}

// Over delay_max_bytes, the lines that record compact their oldest entries
// until the budget holds or each is down to one entry: a delayed stream then
// loses intermediate updates (one refresh IMAGE covers them, as for a
// conflated subscriber), never a field value, and nothing comes early. The
// busiest channels record most, so they are compacted most.
void Subscribers::record_delayed(cache::Channel& ch, std::span<const uint8_t> payload, bool image) {
  const uint64_t now = clock_();
  for (DelayedStream* d : watch(ch).delayed) {
    d->line.record(payload, image, ch.seq, now);
    while (delay_budget_.exhausted() && d->line.compact_oldest()) ++stats_.delay_compactions;
  }
}

void Subscribers::delayed_status(cache::Channel& ch, wire::ChannelState state, wire::Code code,
                                    std::string_view text) {
  for (DelayedStream* d : watch(ch).delayed) {
    d->copy.state = state;
    for (Entry& e : d->subscribers) e.outlet->send_status(d->copy, state, code, text, !e.has_image());
  }
}

void Subscribers::reset_delayed(cache::Channel& ch) {
  for (DelayedStream* d : watch(ch).delayed) {
    d->line.clear();
    d->copy.clear_image();
    d->copy.state = ch.state;
    account_copy(*d);
    for (Entry& e : d->subscribers) e.image_seq = 0;  // a reopened channel starts with an image
  }
}

void Subscribers::add_delayed_exact(cache::Channel& ch, std::vector<Outlet*>& outlets) const {
  for (const DelayedStream* d : watch(ch).delayed) {
    for (const Entry& e : d->subscribers) {
      if (e.exact > 0) outlets.push_back(e.outlet);
    }
  }
}

void Subscribers::deliver_due_delayed(uint64_t now) {
  // Outlets never call back into the router from a delivery, so the map is stable here.
  for (auto& [id, d] : delayed_) {
    while (const DelayLine::Entry* entry = d->line.due(now)) {
      deliver_entry(*d, *entry);
      d->line.pop();
    }
  }
}

void Subscribers::deliver_entry(DelayedStream& d, const DelayLine::Entry& entry) {
  delay_scratch_.resize(d.line.payload_size(entry));
  if (d.line.encode(entry, delay_scratch_) != delay_scratch_.size()) return;
  if (!d.copy.apply(delay_scratch_, entry.image)) return;
  d.copy.seq = entry.seq;  // the live seq it reaches: a merged entry is a jump, as a conflated refresh is
  account_copy(d);
  if (d.subscribers.empty()) return;
  // One message goes out as published; several merged go out as a refresh of the whole delayed state.
  const bool refresh = !entry.image && entry.messages > 1;
  const bool image = entry.image || refresh;
  if (refresh) {
    delay_scratch_.resize(d.copy.image_size());
    if (d.copy.encode_image(delay_scratch_) != delay_scratch_.size()) return;
  }
  const std::span<const uint8_t> payload(delay_scratch_);
  // Subscribers without an image get one first (it holds this entry).
  for (Entry& e : d.subscribers) {
    if (e.has_image()) continue;
    e.outlet->send_stream_image(d.copy, e.policy());
    e.image_seq = d.copy.seq;
  }
  output::StreamFrames frames(fanout_, d.copy, payload, image);
  deliver(d.subscribers, d.copy, frames, payload, image);
}

void Subscribers::account_copy(DelayedStream& d) {
  const size_t now =
      d.copy.has_data() ? sizeof(cache::Channel) + DelayLine::held_bytes(d.copy.image, d.copy.image_size()) : 0;
  delay_budget_.used += now - d.copy_bytes;
  d.copy_bytes = now;
}

}  // namespace tw::broker
