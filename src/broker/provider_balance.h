// How an owner spreads requests over a service's providers
// (docs/configuration.md, provider_balance): by what one owner knows of
// their streams (LocalBalance: the single loop), or over every gateway of a
// tiered broker (SharedBalance, through the ProviderLoads they share), so
// that balancing comes out the same in every thread configuration.
#pragma once
#include <cstdint>
#include <functional>

#include "broker/provider_loads.h"
#include "broker/services.h"

namespace tw::broker {

class ProviderBalance {
 public:
  using Eligible = std::function<bool(const Provider&)>;
  virtual ~ProviderBalance() = default;
  // A provider's open streams, for least-loaded balancing.
  virtual uint32_t load_of(const Provider& p) const = 0;
  // p->channels changed since the last call.
  virtual void note_load(Provider& p) = 0;
  // Round robin: the eligible provider whose turn is next; null if none.
  virtual Provider* next_turn(Service& service, const Eligible& eligible) = 0;
};

class LocalBalance final : public ProviderBalance {
 public:
  uint32_t load_of(const Provider& p) const override { return p.open(); }
  void note_load(Provider&) override {}
  Provider* next_turn(Service& service, const Eligible& eligible) override;
};

class SharedBalance final : public ProviderBalance {
 public:
  explicit SharedBalance(ProviderLoads& loads) : loads_(loads) {}
  uint32_t load_of(const Provider& p) const override;
  void note_load(Provider& p) override;
  // One rotation over all gateways, in a broker-wide order of the providers
  // (their keys; each gateway learns PROVIDEs in its own order).
  Provider* next_turn(Service& service, const Eligible& eligible) override;

 private:
  ProviderLoads& loads_;
};

}  // namespace tw::broker
