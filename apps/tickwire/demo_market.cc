#include "demo_market.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace tw::cli {

namespace {

constexpr std::array<const char*, 60> kTickers = {
    "AAPL", "MSFT", "AMZN", "GOOGL", "META", "NVDA", "TSLA", "JPM",  "V",    "JNJ",  "WMT",  "PG",
    "MA",   "UNH",  "HD",   "DIS",   "BAC",  "XOM",  "CVX",  "KO",   "PEP",  "CSCO", "ORCL", "INTC",
    "AMD",  "NFLX", "ADBE", "CRM",   "PFE",  "MRK",  "ABBV", "TMO",  "ABT",  "NKE",  "MCD",  "COST",
    "AVGO", "TXN",  "QCOM", "IBM",   "GS",   "MS",   "C",    "WFC",  "T",    "VZ",   "CMCSA", "BA",
    "CAT",  "GE",   "MMM",  "HON",   "UPS",  "LMT",  "SBUX", "PYPL", "UBER", "SHOP", "SQ",   "SNOW"};

constexpr int8_t kPriceExponent = -2;  // prices in cents

fields::Decimal cents(int64_t v) { return {v, kPriceExponent}; }

Result<uint16_t> id_of(const fields::Dictionary& dict, const char* name) {
  const fields::FieldDef* def = dict.by_name(name);
  if (def == nullptr) return Error{std::string("the dictionary has no field ") + name};
  return def->id;
}

}  // namespace

Result<DemoMarket> DemoMarket::create(const fields::Dictionary& dict, size_t symbols, uint64_t seed) {
  const char* names[] = {"DSPLY_NAME", "BID",     "ASK",      "BIDSIZE",   "ASKSIZE",   "TRDPRC_1", "TRDVOL_1", "ACVOL_1",
                         "HIGH_1",     "LOW_1",   "OPEN_PRC", "HST_CLOSE", "NETCHNG_1", "QUOTIM",   "SALTIM"};
  std::array<uint16_t, std::size(names)> found{};
  for (size_t i = 0; i < std::size(names); ++i) {
    auto id = id_of(dict, names[i]);
    if (!id) return id.error();
    found[i] = *id;
  }
  Ids ids{found[0], found[1], found[2],  found[3],  found[4],  found[5],  found[6], found[7],
          found[8], found[9], found[10], found[11], found[12], found[13], found[14]};
  DemoMarket market(ids, seed);
  market.symbols_.reserve(symbols);
  for (size_t i = 0; i < symbols; ++i) {
    Symbol s;
    if (i < kTickers.size()) {
      s.name = kTickers[i];
    } else {
      char name[24];
      std::snprintf(name, sizeof name, "SYM%04zu", i - kTickers.size() + 1);
      s.name = name;
    }
    market.randomize(s);
    market.symbols_.push_back(std::move(s));
  }
  return market;
}

void DemoMarket::randomize(Symbol& s) {
  s.close_cents = uniform(1'000, 50'000);
  s.mid_cents = s.close_cents + uniform(-s.close_cents / 50, s.close_cents / 50);
  s.spread_cents = uniform(1, 4);
  s.bid_size = uniform(1, 50) * 100;
  s.ask_size = uniform(1, 50) * 100;
  s.open_cents = s.last_cents = s.high_cents = s.low_cents = s.mid_cents;
}

size_t DemoMarket::add_symbol(std::string_view name) {
  Symbol s;
  s.name.assign(name);
  randomize(s);
  symbols_.push_back(std::move(s));
  return symbols_.size() - 1;
}

size_t DemoMarket::encode_image(size_t i, std::span<uint8_t> out, uint64_t now_ns) const {
  const Symbol& s = symbols_[i];
  fields::FieldListWriter w(out);
  w.add_string(ids_.dsply_name, s.name);
  w.add_decimal(ids_.bid, cents(s.mid_cents - s.spread_cents / 2));
  w.add_decimal(ids_.ask, cents(s.mid_cents - s.spread_cents / 2 + s.spread_cents));
  w.add_int(ids_.bidsize, s.bid_size);
  w.add_int(ids_.asksize, s.ask_size);
  w.add_decimal(ids_.trdprc, cents(s.last_cents));
  w.add_int(ids_.trdvol, s.last_volume);
  w.add_int(ids_.acvol, s.acc_volume);
  w.add_decimal(ids_.high, cents(s.high_cents));
  w.add_decimal(ids_.low, cents(s.low_cents));
  w.add_decimal(ids_.open, cents(s.open_cents));
  w.add_decimal(ids_.close, cents(s.close_cents));
  w.add_decimal(ids_.netchng, cents(s.last_cents - s.close_cents));
  w.add_time(ids_.quotim, s.quote_ns != 0 ? s.quote_ns : now_ns);
  w.add_time(ids_.saltim, s.trade_ns != 0 ? s.trade_ns : now_ns);
  return w.finish();
}

void DemoMarket::move_quote(Symbol& s, uint64_t now_ns) {
  // A step of up to ~0.05% of the price, at least one cent, never below $1.00.
  int64_t step = std::max<int64_t>(1, s.mid_cents / 2000);
  s.mid_cents = std::max<int64_t>(100, s.mid_cents + uniform(-step, step));
  s.spread_cents = std::clamp<int64_t>(s.spread_cents + uniform(-1, 1), 1, 6);
  s.bid_size = uniform(1, 50) * 100;
  s.ask_size = uniform(1, 50) * 100;
  s.quote_ns = now_ns;
}

void DemoMarket::trade(Symbol& s, uint64_t now_ns) {
  int64_t bid = s.mid_cents - s.spread_cents / 2;
  s.last_cents = uniform(0, 1) == 0 ? bid : bid + s.spread_cents;  // hits the bid or lifts the offer
  s.last_volume = uniform(1, 20) * 100;
  s.acc_volume += s.last_volume;
  s.high_cents = std::max(s.high_cents, s.last_cents);
  s.low_cents = std::min(s.low_cents, s.last_cents);
  s.trade_ns = now_ns;
}

size_t DemoMarket::next_update(std::span<uint8_t> out, uint64_t now_ns, size_t& symbol_index) {
  symbol_index = static_cast<size_t>(uniform(0, static_cast<int64_t>(symbols_.size()) - 1));
  return next_update_for(symbol_index, out, now_ns);
}

size_t DemoMarket::next_update_for(size_t i, std::span<uint8_t> out, uint64_t now_ns) {
  Symbol& s = symbols_[i];
  fields::FieldListWriter w(out);
  if (uniform(0, 3) != 0) {
    move_quote(s, now_ns);
    w.add_decimal(ids_.bid, cents(s.mid_cents - s.spread_cents / 2));
    w.add_decimal(ids_.ask, cents(s.mid_cents - s.spread_cents / 2 + s.spread_cents));
    w.add_int(ids_.bidsize, s.bid_size);
    w.add_int(ids_.asksize, s.ask_size);
    w.add_time(ids_.quotim, now_ns);
  } else {
    trade(s, now_ns);
    w.add_decimal(ids_.trdprc, cents(s.last_cents));
    w.add_int(ids_.trdvol, s.last_volume);
    w.add_int(ids_.acvol, s.acc_volume);
    w.add_decimal(ids_.high, cents(s.high_cents));
    w.add_decimal(ids_.low, cents(s.low_cents));
    w.add_decimal(ids_.netchng, cents(s.last_cents - s.close_cents));
    w.add_time(ids_.saltim, now_ns);
  }
  return w.finish();
}

}  // namespace tw::cli
