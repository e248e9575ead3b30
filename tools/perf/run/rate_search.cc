#include "perf/run/rate_search.h"

#include <cmath>

namespace tw::perf::run {

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::Ok: return "ok";
    case Verdict::Lossy: return "lossy";
    case Verdict::Saturated: return "saturated";
    case Verdict::Backlogged: return "backlogged";
  }
  return "?";
}

const char* phase_name(SearchPhase phase) {
  switch (phase) {
    case SearchPhase::Escalate: return "escalate";
    case SearchPhase::Bisect: return "bisect";
    case SearchPhase::Confirm: return "confirm";
  }
  return "?";
}

namespace {

class Search {
 public:
  Search(const SearchConfig& config, const TrialFunction& trial) : config_(config), trial_(trial) {}

  SearchResult run() {
    escalate();
    if (good_ > 0 && bad_ > 0) bisect();
    if (good_ > 0) confirm();
    return result_;
  }

 private:
  bool attempt(double rate, SearchPhase phase) {
    rate = std::round(rate);
    Verdict verdict = trial_(rate, phase);
    result_.steps.push_back({phase, rate, verdict});
    if (verdict == Verdict::Saturated) result_.saturated = true;
    return verdict == Verdict::Ok;
  }

  void escalate() {
    double rate = config_.start_rate;
    if (!attempt(rate, SearchPhase::Escalate)) {
      bad_ = rate;
      // Too high already: come down until one passes.
      for (rate /= config_.factor; rate >= config_.min_rate; rate /= config_.factor) {
        if (attempt(rate, SearchPhase::Escalate)) {
          good_ = rate;
          return;
        }
        bad_ = rate;
      }
      return;
    }
    good_ = rate;
    for (rate *= config_.factor; rate <= config_.max_rate; rate *= config_.factor) {
      if (!attempt(rate, SearchPhase::Escalate)) {
        bad_ = rate;
        return;
      }
      good_ = rate;
    }
  }

  void bisect() {
    for (int i = 0; i < config_.bisect_steps; ++i) {
      double middle = (good_ + bad_) / 2;
      if (attempt(middle, SearchPhase::Bisect)) good_ = middle;
      else bad_ = middle;
    }
  }

  void confirm() {
    double rate = good_;
    for (int tries = 0; tries <= config_.max_step_downs && rate >= config_.min_rate; ++tries) {
      bool all_good = true;
      for (int run = 0; run < config_.confirm_runs && all_good; ++run) all_good = attempt(rate, SearchPhase::Confirm);
      if (all_good) {
        result_.found = true;
        result_.rate = std::round(rate);
        return;
      }
      rate *= config_.step_down;
    }
  }

  const SearchConfig& config_;
  const TrialFunction& trial_;
  double good_ = 0;  // highest rate that passed (0 = none)
  double bad_ = 0;   // lowest rate that failed above good_ (0 = none)
  SearchResult result_;
};

}  // namespace

SearchResult search_max_rate(const SearchConfig& config, const TrialFunction& trial) {
  return Search(config, trial).run();
}

}  // namespace tw::perf::run
