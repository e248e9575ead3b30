#include "perf/run/fanout.h"

namespace tw::perf::run {

Result<FanoutPlan> plan_fanout(int subscribers, int fanout, int topics) {
  if (subscribers < 1 || fanout < 1 || topics < 1)
    return Error{"subscribers, fanout and topics must be at least 1"};
  if (subscribers % fanout != 0)
    return Error{"subscribers (" + std::to_string(subscribers) + ") must be a multiple of fanout (" +
                 std::to_string(fanout) + ")"};
  FanoutPlan plan{subscribers, fanout, subscribers / fanout, topics};
  if (topics < plan.groups)
    return Error{"topics (" + std::to_string(topics) + ") must be at least subscribers / fanout (" +
                 std::to_string(plan.groups) + ")"};
  return plan;
}

int group_of_subscriber(const FanoutPlan& plan, int index) { return index % plan.groups; }

std::vector<int> topics_of_group(const FanoutPlan& plan, int group) {
  std::vector<int> topics;
  for (int t = group; t < plan.topics; t += plan.groups) topics.push_back(t);
  return topics;
}

int subscribers_of_topic(const FanoutPlan& plan, int topic) {
  int count = 0;
  for (int s = 0; s < plan.subscribers; ++s)
    if (topic % plan.groups == group_of_subscriber(plan, s)) ++count;
  return count;
}

Result<std::vector<TopicRange>> split_topics(int topics, int publishers) {
  if (publishers < 1) return Error{"publishers must be at least 1"};
  if (topics < publishers)
    return Error{"topics (" + std::to_string(topics) + ") must be at least publishers (" +
                 std::to_string(publishers) + ")"};
  std::vector<TopicRange> ranges;
  int offset = 0;
  for (int p = 0; p < publishers; ++p) {
    int count = topics / publishers + (p < topics % publishers ? 1 : 0);
    ranges.push_back({offset, count});
    offset += count;
  }
  return ranges;
}

Result<int> subscriber_processes(const FanoutPlan& plan, int connections_per_sub) {
  if (connections_per_sub < 1 || plan.fanout % connections_per_sub != 0)
    return Error{"connections per subscriber process (" + std::to_string(connections_per_sub) +
                 ") must divide fanout (" + std::to_string(plan.fanout) + ")"};
  return plan.subscribers / connections_per_sub;
}

std::vector<std::string> subscriber_topic_args(const FanoutPlan& plan, int index, const std::string& prefix) {
  if (plan.groups == 1) return {prefix + "/>"};
  return {"--prefix", prefix, "--topics", std::to_string(plan.topics), "--groups", std::to_string(plan.groups),
          "--group", std::to_string(group_of_subscriber(plan, index))};
}

}  // namespace tw::perf::run
