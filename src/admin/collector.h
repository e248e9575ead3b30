// Collector: an Outlet the admin side hands to a router, on the router's own
// loop thread, for the length of one call: it keeps the channel rows of a
// listing and the image of a snapshot, and ignores everything else (it
// subscribes to nothing, so no stream ever reaches it).
#pragma once
#include <string>
#include <vector>

#include "admin/statistics.h"
#include "broker/outlet.h"

namespace tw::admin {

struct ImageCopy {
  bool found = false;
  uint32_t channel_id = 0;
  std::string topic;
  wire::PayloadKind kind = wire::PayloadKind::FieldList;
  wire::ChannelState state = wire::ChannelState::Ok;
  uint64_t seq = 0;
  std::vector<uint8_t> payload;  // the image: a field list, or the last opaque message
};

class Collector final : public broker::Outlet, public broker::RequesterOutlet {
 public:
  std::vector<ChannelRow> rows;
  std::string prefix;  // rows kept: topics that start with it
  ImageCopy image;

  void send_image(const cache::Channel& channel, uint32_t) override {
    image.found = true;
    image.channel_id = channel.id;
    image.topic = channel.topic;
    image.kind = channel.kind;
    image.state = channel.state;
    image.seq = channel.seq;
    image.payload.resize(channel.image_size());
    image.payload.resize(channel.encode_image(image.payload));
  }
  // It subscribes to nothing: no stream message ever comes.
  void send_delivery(const broker::Delivery&) override {}
  broker::RequesterOutlet* as_requester() override { return this; }
  void send_channel_info(const wire::ChannelInfo& info) override {
    if (info.topic.substr(0, prefix.size()) != prefix) return;
    ChannelRow row;
    row.channel_id = info.channel_id;
    row.topic = info.topic;
    row.state = info.state;
    row.subscribers = info.subscribers;
    row.seq = info.seq;
    row.rate = info.rate;
    row.provider = info.provider;
    rows.push_back(std::move(row));
  }
  // Only an access point's requests are answered later, never one on the channels' own loop.
  void complete_request(uint32_t, const broker::Outcome&) override {}
  void flush_output() override {}
  std::string_view name() const override { return "admin"; }
};

}  // namespace tw::admin
