#include "channel_listing.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "tickwire/client/message_format.h"

namespace tw::cli {

namespace {

constexpr const char* kBroadcast = "(broadcast)";
// An interactive channel whose provider went away (STALE until another
// arrives): broadcast channels are always OK, so an empty provider with
// another state is never a broadcast one.
constexpr const char* kNoProvider = "(no provider)";

void sort_by_topic(std::vector<client::ChannelRow>& rows) {
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.topic < b.topic; });
}

std::string provider_label(const client::ChannelRow& row) {
  if (!row.provider.empty()) return row.provider;
  return row.state == wire::ChannelState::Ok ? kBroadcast : kNoProvider;
}

void pad(std::string& out, const std::string& cell, size_t width) {
  out += cell;
  out.append(width - cell.size() + 2, ' ');
}

}  // namespace

std::vector<std::pair<std::string, size_t>> provider_distribution(const std::vector<client::ChannelRow>& rows) {
  std::map<std::string, size_t> counts;
  for (const auto& row : rows) ++counts[provider_label(row)];
  std::vector<std::pair<std::string, size_t>> out(counts.begin(), counts.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::string format_channel_table(std::vector<client::ChannelRow> rows) {
  sort_by_topic(rows);
  const std::vector<std::string> header = {"TOPIC", "STATE", "PROVIDER", "SUBSCRIBERS", "SEQ", "RATE/s"};
  std::vector<std::vector<std::string>> cells;
  cells.push_back(header);
  for (const auto& r : rows)
    cells.push_back({client::terminal_safe(r.topic), wire::state_name(r.state),
                     r.provider.empty() ? (r.state == wire::ChannelState::Ok ? "-" : kNoProvider)
                                        : client::terminal_safe(r.provider),
                     std::to_string(r.subscribers), std::to_string(r.seq), std::to_string(r.rate)});
  std::vector<size_t> width(header.size(), 0);
  for (const auto& line : cells)
    for (size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], line[c].size());
  std::string out;
  for (const auto& line : cells) {
    for (size_t c = 0; c + 1 < line.size(); ++c) pad(out, line[c], width[c]);
    out += line.back();
    out += '\n';
  }
  out += '\n';
  for (const auto& [name, n] : provider_distribution(rows))
    out += client::terminal_safe(name) + ": " + std::to_string(n) + (n == 1 ? " channel\n" : " channels\n");
  return out;
}

std::string format_channel_json(std::vector<client::ChannelRow> rows) {
  sort_by_topic(rows);
  nlohmann::json channels = nlohmann::json::array();
  for (const auto& r : rows) {
    channels.push_back({{"topic", r.topic},
                        {"channel_id", r.channel_id},
                        {"state", wire::state_name(r.state)},
                        {"provider", r.provider},
                        {"subscribers", r.subscribers},
                        {"seq", r.seq},
                        {"rate", r.rate}});
  }
  nlohmann::json providers = nlohmann::json::object();
  for (const auto& [name, n] : provider_distribution(rows)) providers[name] = n;
  // ASCII out (\uXXXX for the rest, U+FFFD for bytes that are not UTF-8): a
  // name the broker let through must neither abort the dump nor reach the terminal raw.
  return nlohmann::json{{"channels", channels}, {"providers", providers}}.dump(
      -1, ' ', true, nlohmann::json::error_handler_t::replace);
}

}  // namespace tw::cli
