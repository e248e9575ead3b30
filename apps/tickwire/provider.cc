// tickwire provider SERVICE [--pattern P] [--symbols FILE|N] [--not-found-unknown] [--rate R]
//                           [--seconds S] [--seed N] [--quiet] [--verbose]
// Serves SERVICE as an interactive provider with synthetic market data: an
// image when the broker requests a topic, then updates at --rate in total over
// the open streams, until the broker releases the stream. The symbol is the
// topic's last level. With --symbols (N = SYM0001..SYMn, or a file with one
// symbol per line) other symbols are answered NOT_FOUND; --not-found-unknown
// alone restricts to the demo's 60 real tickers. One stderr line per request
// and release (unless --quiet), a summary on exit (SIGINT/SIGTERM, --seconds).
#include <cstdio>

#include "common.h"
#include "market_provider.h"

namespace tw::cli {

namespace {

constexpr size_t kRealTickers = 60;

struct ProviderCommandOptions {
  std::string service;
  std::string pattern;
  std::string symbols;
  bool not_found_unknown = false;
  double rate = 100;
  double seconds = 0;
  uint64_t seed = 1;
  bool quiet = false;
  bool verbose = false;
};

void print_summary(const std::string& name, const MarketProviderSummary& s) {
  std::printf("%s: %llu requests (%llu served, %llu not found), %llu releases, %llu updates, %zu streams open\n",
              name.c_str(), static_cast<unsigned long long>(s.requests), static_cast<unsigned long long>(s.served),
              static_cast<unsigned long long>(s.not_found), static_cast<unsigned long long>(s.releases),
              static_cast<unsigned long long>(s.updates), s.open_at_exit);
}

Result<std::optional<std::unordered_set<std::string>>> known_symbols(const ProviderCommandOptions& opts,
                                                                     const DemoMarket& tickers) {
  if (!opts.symbols.empty()) {
    auto list = parse_symbol_list(opts.symbols);
    if (!list) return list.error();
    return std::optional<std::unordered_set<std::string>>(std::move(*list));
  }
  if (!opts.not_found_unknown) return std::optional<std::unordered_set<std::string>>();
  std::unordered_set<std::string> real;
  for (size_t i = 0; i < tickers.size(); ++i) real.insert(tickers.symbol(i));
  return std::optional<std::unordered_set<std::string>>(std::move(real));
}

int run_provider(const ProviderCommandOptions& opts, const CommonOptions& common) {
  const std::string name = "provider";
  auto fail = [&](const std::string& message) {
    std::fprintf(stderr, "tickwire provider: %s\n", message.c_str());
    return kExitError;
  };
  auto dict = dictionary(common);
  if (!dict) return fail(dict.error().message);
  auto market = DemoMarket::create(**dict, kRealTickers, opts.seed);
  if (!market) return fail(market.error().message);
  auto known = known_symbols(opts, *market);
  if (!known) return fail(known.error().message);
  auto options = client_options(common, "tickwire-provider");
  if (!options) return fail(options.error().message);

  client::Client client;
  client.on_connection([&](client::ConnectionEvent event, std::string_view reason) {
    std::fprintf(stderr, "%s: %s%s%.*s\n", name.c_str(), client::event_name(event), reason.empty() ? "" : ": ",
                 static_cast<int>(reason.size()), reason.data());
  });
  if (!connect_or_report(client, *options)) return kExitError;

  MarketProviderOptions po;
  po.service = opts.service;
  po.pattern = opts.pattern;
  po.rate = opts.rate;
  po.seconds = opts.seconds;
  po.known_symbols = std::move(*known);
  po.log_streams = !opts.quiet;
  po.log_images = opts.verbose;
  po.name = name;
  MarketProvider provider(client, *market, std::move(po));
  if (Status started = provider.start(); !started) return fail(started.error().message);
  std::printf("provider: serving %s%s%s at %g updates/s\n", opts.service.c_str(), opts.pattern.empty() ? "" : " ",
              opts.pattern.c_str(), opts.rate);
  std::fflush(stdout);
  int rc = provider.run();
  print_summary(name, provider.summary());
  client.close();
  return rc;
}

}  // namespace

void add_provider_command(CLI::App& app, const CommonOptions& common, int& exit_code) {
  auto opts = std::make_shared<ProviderCommandOptions>();
  CLI::App* cmd = app.add_subcommand("provider", "serve a service's topics on request with synthetic market data");
  cmd->add_option("service", opts->service, "service to provide (one topic level, e.g. SVC)")->required();
  cmd->add_option("--pattern", opts->pattern, "serve only topics matching this pattern (e.g. SVC/EQ/>)");
  cmd->add_option("--symbols", opts->symbols,
                  "known symbols: N (SYM0001..SYMn) or a file with one per line; others get NOT_FOUND");
  cmd->add_flag("--not-found-unknown", opts->not_found_unknown,
                "answer NOT_FOUND for symbols not known (default list: the 60 demo tickers)");
  cmd->add_option("--rate", opts->rate, "updates per second in total over the open streams, 0 = as fast as possible")
      ->check(non_negative_number());
  cmd->add_option("--seconds", opts->seconds, "stop after S seconds (0 = run until interrupted)")
      ->check(non_negative_number());
  cmd->add_option("--seed", opts->seed, "random seed, for a reproducible market");
  cmd->add_flag("-q,--quiet", opts->quiet, "no line per request and release");
  cmd->add_flag("-v,--verbose", opts->verbose, "also a line per image sent");
  cmd->callback([opts, &common, &exit_code]() { exit_code = run_provider(*opts, common); });
}

}  // namespace tw::cli
