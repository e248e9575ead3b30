#include "http/response.h"

namespace tw::http {

std::string_view reason_phrase(int status) {
  switch (status) {
    case 101: return "Switching Protocols";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 426: return "Upgrade Required";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
  }
}

std::string serialize(const Response& response, bool keep_alive, bool head_only) {
  const bool stream = static_cast<bool>(response.next_event);
  std::string out;
  out.reserve(128 + response.body.size());
  out += "HTTP/1.1 " + std::to_string(response.status) + " ";
  out += reason_phrase(response.status);
  out += "\r\n";
  if (stream) {
    out += "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\n";
  } else {
    if (!response.content_type.empty()) out += "Content-Type: " + response.content_type + "\r\n";
    out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
  }
  for (const auto& [name, value] : response.headers) out += name + ": " + value + "\r\n";
  out += keep_alive || stream ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  if (!head_only) out += response.body;
  return out;
}

std::string sse_event(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  size_t start = 0;
  while (start <= data.size()) {
    size_t end = data.find('\n', start);
    if (end == std::string_view::npos) end = data.size();
    out += "data: ";
    out.append(data.substr(start, end - start));
    out += "\n";
    start = end + 1;
  }
  out += "\n";
  return out;
}

}  // namespace tw::http
