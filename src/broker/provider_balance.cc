#include "broker/provider_balance.h"

namespace tw::broker {

Provider* LocalBalance::next_turn(Service& service, const Eligible& eligible) {
  const size_t n = service.providers.size();
  for (size_t i = 0; i < n; ++i) {
    Provider& p = *service.providers[(service.next_round_robin + i) % n];
    if (!eligible(p)) continue;
    service.next_round_robin = (service.next_round_robin + i + 1) % n;
    return &p;
  }
  return nullptr;
}

uint32_t SharedBalance::load_of(const Provider& p) const {
  return loads_.total(p.outlet->provider_key(), p.service);
}

void SharedBalance::note_load(Provider& p) {
  loads_.add(p.outlet->provider_key(), p.service, int64_t{p.open()} - int64_t{p.reported});
  p.reported = p.open();
}

Provider* SharedBalance::next_turn(Service& service, const Eligible& eligible) {
  Provider* chosen = nullptr;
  loads_.take_turn(service.name, [&](uint64_t last) {
    Provider* first = nullptr;
    Provider* next = nullptr;
    for (const auto& p : service.providers) {
      if (!eligible(*p)) continue;
      const uint64_t key = p->outlet->provider_key();
      if (!first || key < first->outlet->provider_key()) first = p.get();
      if (key > last && (!next || key < next->outlet->provider_key())) next = p.get();
    }
    chosen = next ? next : first;
    return chosen ? chosen->outlet->provider_key() : uint64_t{0};
  });
  return chosen;
}

}  // namespace tw::broker
