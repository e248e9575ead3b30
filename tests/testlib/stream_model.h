// What a subscriber knows from the stream: per channel its topic (from
// CHANNEL), payload kind, last seq and merged fields (field lists) or last
// payload (opaque). Every stream rule the broker promises is checked as frames
// are applied, and each violation is recorded in errors():
//   - IMAGE/UPDATE/STATUS only for a channel introduced by CHANNEL;
//   - the first stream IMAGE of a channel may have any seq; every later stream
//     IMAGE or UPDATE has exactly the previous seq + 1 (no gap, no duplicate);
//   - an UPDATE never comes before the channel's first IMAGE;
//   - field-list payloads are well formed.
// Snapshot IMAGEs (request_id != 0) are counted apart and do not touch the stream.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tickwire/fields/field_list.h"
#include "testlib/raw_client.h"

namespace tw::testing {

struct ChannelModel {
  uint32_t channel_id = 0;
  std::string topic;
  wire::PayloadKind kind = wire::PayloadKind::FieldList;
  bool has_image = false;
  uint64_t first_seq = 0;  // seq of the first stream IMAGE
  uint64_t seq = 0;        // last stream seq
  uint64_t images = 0;     // stream IMAGEs
  uint64_t updates = 0;
  // STATUS frames: the last state and code, and how many of each state came.
  wire::ChannelState state = wire::ChannelState::Ok;
  wire::Code status_code = wire::Code::Ok;
  std::string status_text;
  uint64_t stale_statuses = 0;
  uint64_t ok_statuses = 0;
  uint64_t closed_statuses = 0;
  fields::FieldImage image;            // field lists: merged state
  std::vector<uint8_t> last_payload;   // both kinds: the last payload received
  uint64_t messages() const { return images + updates; }
};

class StreamModel {
 public:
  // Applies a frame. Stream frames return true; other frames (ACK, WELCOME,
  // HEARTBEAT, ERROR...) return false and are ignored, except ERROR, which is
  // recorded as an error.
  bool apply(const OwnedFrame& frame);
  // Forget everything, e.g. after resubscribing.
  void clear() { *this = StreamModel(); }

  const ChannelModel* find(const std::string& topic) const;
  const std::map<std::string, ChannelModel>& channels() const { return by_topic_; }
  const std::vector<std::string>& errors() const { return errors_; }
  uint64_t stream_messages() const { return stream_messages_; }
  uint64_t snapshot_images() const { return snapshot_images_; }
  // Messages received on `topic` (0 when never introduced).
  uint64_t messages_on(const std::string& topic) const;

 private:
  ChannelModel* channel_for(uint32_t id, const char* what);
  void on_channel(const wire::ChannelIntro& intro);
  void on_image(const wire::Image& image);
  void on_update(const wire::Update& update);
  void on_status(const wire::StatusMsg& status);
  void error(std::string text);

  std::map<uint32_t, std::string> topic_by_id_;
  std::map<std::string, ChannelModel> by_topic_;
  std::vector<std::string> errors_;
  uint64_t stream_messages_ = 0;
  uint64_t snapshot_images_ = 0;
};

// Reads frames from `client` into `model` until done() holds (true) or the
// timeout passes or the connection ends (false). done() is checked first.
bool collect_until(RawClient& client, StreamModel& model, const std::function<bool()>& done,
                   int timeout_ms = kDefaultTimeoutMs);

}  // namespace tw::testing
