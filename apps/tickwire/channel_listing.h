// Rendering of `tickwire channels`: a table (or one JSON object) of the
// broker's channels, and how many each provider serves.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "tickwire/client/client.h"

namespace tw::cli {

// Channels per provider, busiest first (ties by name); broadcast channels
// count under "(broadcast)".
std::vector<std::pair<std::string, size_t>> provider_distribution(const std::vector<client::ChannelRow>& rows);
// Aligned columns TOPIC STATE PROVIDER SUBSCRIBERS SEQ RATE/s, one row per
// channel sorted by topic, then a blank line and "NAME: N channels" per provider.
std::string format_channel_table(std::vector<client::ChannelRow> rows);
// {"channels":[{topic,channel_id,state,provider,subscribers,seq,rate}...],"providers":{NAME:N}}
std::string format_channel_json(std::vector<client::ChannelRow> rows);

}  // namespace tw::cli
