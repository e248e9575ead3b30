// Which topics each load process handles, so that every message reaches
// exactly F subscribers (docs/perf.md, "Orchestrator").
//
// Subscribers form G = S / F groups of F members; group g takes the topics t
// with t % G == g. Publishers split the T topics into contiguous ranges.
#pragma once
#include <string>
#include <vector>

#include "tickwire/base/result.h"

namespace tw::perf::run {

struct FanoutPlan {
  int subscribers = 1;
  int fanout = 1;
  int groups = 1;  // S / F
  int topics = 1;
};

// Checks S % F == 0 and T >= S / F (a group with no topic would receive nothing).
Result<FanoutPlan> plan_fanout(int subscribers, int fanout, int topics);

// The group of subscriber `index` (0-based).
int group_of_subscriber(const FanoutPlan& plan, int index);
// The topics group `group` subscribes to.
std::vector<int> topics_of_group(const FanoutPlan& plan, int group);
// How many subscribers receive topic t: F by construction.
int subscribers_of_topic(const FanoutPlan& plan, int topic);

struct TopicRange {
  int offset = 0;
  int count = 0;
};
// Splits T topics among P publishers as evenly as possible; needs T >= P.
Result<std::vector<TopicRange>> split_topics(int topics, int publishers);

// Subscriber processes when each hosts `connections_per_sub` subscribers of
// one group (perf sub --connections): S / K; needs F % K == 0 so that a
// group's F members fill whole processes. Process p hosts group p % G.
Result<int> subscriber_processes(const FanoutPlan& plan, int connections_per_sub);

// The `perf sub` arguments selecting subscriber `index`'s topics: the wildcard
// PREFIX/> when one group takes all topics, else --groups/--group/--topics.
std::vector<std::string> subscriber_topic_args(const FanoutPlan& plan, int index, const std::string& prefix);

}  // namespace tw::perf::run
