#include "tickwire/client/message_format.h"

#include "fields/json.h"

namespace tw::client {

std::string format_text(const Message& msg, const fields::Dictionary& dict) {
  std::string line = kind_name(msg.kind);
  line.resize(7, ' ');  // "IMAGE  ", "UPDATE ", "STATUS ": topics line up
  line += msg.topic.empty() ? "#" + std::to_string(msg.channel_id) : std::string(msg.topic);
  if (msg.kind == MessageKind::Status) {
    line += std::string(" ") + wire::state_name(msg.state) + " code=" + wire::code_name(msg.code);
    if (!msg.text.empty()) line += " " + std::string(msg.text);
    return terminal_safe(line);
  }
  line += " seq=" + std::to_string(msg.seq);
  std::string payload = format_payload(msg.payload_kind, msg.payload, dict);
  if (!payload.empty()) line += " " + payload;
  return terminal_safe(line);
}

std::string format_json(const Message& msg, const fields::Dictionary& dict) {
  using Kind = fields::MessageView::Kind;
  fields::MessageView view;
  view.kind = msg.kind == MessageKind::Image ? Kind::Image : msg.kind == MessageKind::Update ? Kind::Update : Kind::Status;
  view.topic = msg.topic;
  view.channel = msg.channel_id;
  view.seq = msg.seq;
  view.gap = msg.gap;
  view.payload_kind = msg.payload_kind;
  view.payload = msg.payload;
  view.state = msg.state;
  view.code = msg.code;
  view.text = msg.text;
  return fields::message_json(view, dict);
}

}  // namespace tw::client
