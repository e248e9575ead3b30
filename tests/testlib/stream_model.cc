#include "testlib/stream_model.h"

#include <chrono>

namespace tw::testing {

bool StreamModel::apply(const OwnedFrame& frame) {
  switch (frame.type()) {
    case wire::MsgType::Channel:
      if (auto m = frame.as<wire::ChannelIntro>()) on_channel(*m); else error("malformed CHANNEL");
      return true;
    case wire::MsgType::Image:
      if (auto m = frame.as<wire::Image>()) on_image(*m); else error("malformed IMAGE");
      return true;
    case wire::MsgType::Update:
      if (auto m = frame.as<wire::Update>()) on_update(*m); else error("malformed UPDATE");
      return true;
    case wire::MsgType::Status:
      if (auto m = frame.as<wire::StatusMsg>()) on_status(*m); else error("malformed STATUS");
      return true;
    case wire::MsgType::Error:
      error("ERROR frame: " + describe(frame));
      return false;
    default:
      return false;
  }
}

const ChannelModel* StreamModel::find(const std::string& topic) const {
  auto it = by_topic_.find(topic);
  return it == by_topic_.end() ? nullptr : &it->second;
}

uint64_t StreamModel::messages_on(const std::string& topic) const {
  const ChannelModel* ch = find(topic);
  return ch ? ch->messages() : 0;
}

void StreamModel::error(std::string text) {
  if (errors_.size() < 20) errors_.push_back(std::move(text));
}

ChannelModel* StreamModel::channel_for(uint32_t id, const char* what) {
  auto it = topic_by_id_.find(id);
  if (it == topic_by_id_.end()) {
    error(std::string(what) + " for channel " + std::to_string(id) + " before its CHANNEL frame");
    return nullptr;
  }
  return &by_topic_[it->second];
}

void StreamModel::on_channel(const wire::ChannelIntro& intro) {
  std::string topic(intro.topic);
  auto known = topic_by_id_.find(intro.channel_id);
  if (known != topic_by_id_.end() && known->second != topic) {
    error("channel " + std::to_string(intro.channel_id) + " renamed from " + known->second + " to " + topic);
  }
  topic_by_id_[intro.channel_id] = topic;
  ChannelModel& ch = by_topic_[topic];
  if (ch.topic.empty()) {
    ch.topic = topic;
    ch.channel_id = intro.channel_id;
    ch.kind = intro.kind;
  } else if (ch.kind != intro.kind) {
    error("channel " + topic + " changed payload kind");
  }
}

void StreamModel::on_image(const wire::Image& image) {
  if (image.request_id != 0) {  // a snapshot answer, not part of the stream
    ++snapshot_images_;
    return;
  }
  ChannelModel* ch = channel_for(image.channel_id, "IMAGE");
  if (!ch) return;
  if (ch->has_image && image.seq != ch->seq + 1) {
    error(ch->topic + ": stream IMAGE seq " + std::to_string(image.seq) + " after " + std::to_string(ch->seq));
  }
  if (!ch->has_image) ch->first_seq = image.seq;
  ch->has_image = true;
  ch->seq = image.seq;
  ++ch->images;
  ++stream_messages_;
  ch->last_payload.assign(image.payload.begin(), image.payload.end());
  if (ch->kind == wire::PayloadKind::FieldList && !ch->image.replace(image.payload)) {
    error(ch->topic + ": malformed field list in IMAGE");
  }
}

void StreamModel::on_update(const wire::Update& update) {
  ChannelModel* ch = channel_for(update.channel_id, "UPDATE");
  if (!ch) return;
  if (!ch->has_image) {
    error(ch->topic + ": UPDATE seq " + std::to_string(update.seq) + " before any IMAGE");
  } else if (update.seq != ch->seq + 1) {
    error(ch->topic + ": UPDATE seq " + std::to_string(update.seq) + " after " + std::to_string(ch->seq));
  }
  ch->seq = update.seq;
  ++ch->updates;
  ++stream_messages_;
  ch->last_payload.assign(update.payload.begin(), update.payload.end());
  if (ch->kind == wire::PayloadKind::FieldList && !ch->image.merge(update.payload)) {
    error(ch->topic + ": malformed field list in UPDATE");
  }
}

void StreamModel::on_status(const wire::StatusMsg& status) {
  ChannelModel* ch = channel_for(status.channel_id, "STATUS");
  if (!ch) return;
  ch->state = status.state;
  ch->status_code = status.code;
  ch->status_text = std::string(status.text);
  if (status.state == wire::ChannelState::Stale) ++ch->stale_statuses;
  if (status.state == wire::ChannelState::Ok) ++ch->ok_statuses;
  if (status.state == wire::ChannelState::Closed) ++ch->closed_statuses;
}

bool collect_until(RawClient& client, StreamModel& model, const std::function<bool()>& done, int timeout_ms) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!done()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    auto f = client.next(static_cast<int>(left));
    if (!f) return done();
    model.apply(*f);
  }
  return true;
}

}  // namespace tw::testing
