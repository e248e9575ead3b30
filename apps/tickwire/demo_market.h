// A simulated equity market for `tickwire demo-feed`: each symbol has a
// random-walk mid price (exact decimals, 2 dp), a bid/ask spread and sizes,
// and trades that move TRDPRC_1/TRDVOL_1/ACVOL_1/HIGH_1/LOW_1/NETCHNG_1.
// Deterministic for a given seed. Encoding writes into caller memory and never
// allocates, so the feed's publish loop stays allocation-free.
#pragma once
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tickwire/base/result.h"
#include "tickwire/fields/dictionary.h"

namespace tw::cli {

class DemoMarket {
 public:
  // Field ids come from the dictionary by name; an error names a missing field.
  static Result<DemoMarket> create(const fields::Dictionary& dict, size_t symbols, uint64_t seed);

  size_t size() const { return symbols_.size(); }
  const std::string& symbol(size_t i) const { return symbols_[i].name; }

  // The full image of symbol i. Returns the size, 0 if `out` is too small.
  size_t encode_image(size_t i, std::span<uint8_t> out, uint64_t now_ns) const;
  // Adds a symbol with a fresh random state (for topics requested by name);
  // returns its index.
  size_t add_symbol(std::string_view name);
  // Advances symbol i by one event and encodes it as an update.
  size_t next_update_for(size_t i, std::span<uint8_t> out, uint64_t now_ns);
  // Advances the market by one event (a quote, or a trade about one time in
  // four) on a random symbol and encodes it as an update.
  size_t next_update(std::span<uint8_t> out, uint64_t now_ns, size_t& symbol_index);

 private:
  struct Ids {
    uint16_t dsply_name, bid, ask, bidsize, asksize, trdprc, trdvol, acvol, high, low, open, close, netchng,
        quotim, saltim;
  };
  struct Symbol {
    std::string name;
    int64_t mid_cents = 0;
    int64_t spread_cents = 1;
    int64_t bid_size = 0, ask_size = 0;
    int64_t last_cents = 0, last_volume = 0, acc_volume = 0;
    int64_t high_cents = 0, low_cents = 0, open_cents = 0, close_cents = 0;
    uint64_t quote_ns = 0, trade_ns = 0;
  };

  DemoMarket(const Ids& ids, uint64_t seed) : ids_(ids), rng_(seed) {}
  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  void move_quote(Symbol& s, uint64_t now_ns);
  void trade(Symbol& s, uint64_t now_ns);
  void randomize(Symbol& s);

  Ids ids_;
  std::mt19937_64 rng_;
  std::vector<Symbol> symbols_;
};

}  // namespace tw::cli
