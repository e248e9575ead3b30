#include "stream/reply.h"

#include <nlohmann/json.hpp>

namespace tw::stream {
namespace {

using Json = nlohmann::ordered_json;

std::string dump(const Json& j) { return j.dump(-1, ' ', true, Json::error_handler_t::replace); }

}  // namespace

std::string ack_json(const Request& request, wire::Code code, std::string_view text) {
  Json j;
  j["type"] = "ack";
  if (request.id) j["id"] = *request.id;
  j["op"] = op_name(request.op);
  if (request.op == Op::Login) {
    j["user"] = request.user;
  } else {
    j["topic"] = request.topic;
  }
  j["code"] = wire::code_name(code);
  if (!text.empty()) j["text"] = std::string(text);
  return dump(j);
}

std::string error_json(wire::Code code, std::string_view text) {
  Json j;
  j["type"] = "error";
  j["code"] = wire::code_name(code);
  j["text"] = std::string(text);
  return dump(j);
}

}  // namespace tw::stream
