// The search for the highest sustainable rate (throughput mode). A pure
// algorithm over a trial function, so it is tested with a fake broker.
//
// 1. escalate: from start_rate, multiply by `factor` until a trial fails
//    (if the very first fails, divide until one passes or min_rate is reached);
// 2. bisect `bisect_steps` times between the last good and the first bad rate;
// 3. confirm: `confirm_runs` consecutive good trials at the found rate; any
//    failure steps the rate down by `step_down` and starts the confirmation over.
// A Saturated trial (the load generator fell behind) counts as a failure, and
// the result says so: the limit found is then the generator's, not the broker's.
// A Backlogged trial (nothing lost, but delivered only after the drain bound,
// docs/perf.md "Drain bound") is a failure too: the broker buffered that rate,
// it did not sustain it.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace tw::perf::run {

enum class Verdict { Ok, Lossy, Saturated, Backlogged };
const char* verdict_name(Verdict verdict);

struct SearchConfig {
  double start_rate = 50'000;
  double factor = 2;
  double max_rate = 50'000'000;  // stop escalating here (a good trial at max_rate ends the search)
  double min_rate = 100;
  int bisect_steps = 4;
  int confirm_runs = 3;
  double step_down = 0.9;
  int max_step_downs = 5;
};

enum class SearchPhase { Escalate, Bisect, Confirm };
const char* phase_name(SearchPhase phase);

struct SearchStep {
  SearchPhase phase;
  double rate;
  Verdict verdict;
};

struct SearchResult {
  bool found = false;      // a rate passed confirm_runs consecutive trials
  double rate = 0;         // that rate
  bool saturated = false;  // some failing trial was a saturated load generator
  std::vector<SearchStep> steps;  // every trial, in order
};

using TrialFunction = std::function<Verdict(double rate, SearchPhase phase)>;

SearchResult search_max_rate(const SearchConfig& config, const TrialFunction& trial);

}  // namespace tw::perf::run
