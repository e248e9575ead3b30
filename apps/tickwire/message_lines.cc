#include "message_lines.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "fields/json.h"
#include "common.h"
#include "fields/assignments.h"

namespace tw::cli {

Result<std::vector<std::string>> split_words(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (!quoted && (c == ' ' || c == '\t')) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '"') {
      quoted = !quoted;
    } else if (quoted && c == '\\' && i + 1 < line.size()) {
      word += line[++i];
    } else {
      word += c;
    }
  }
  if (quoted) return Error{"a double quote is not closed"};
  if (in_word) words.push_back(std::move(word));
  return words;
}

Result<LineMessage> parse_message_line(std::string_view line, bool json, const fields::Dictionary& dict) {
  LineMessage message;
  const size_t first = line.find_first_not_of(" \t");
  if (first == std::string_view::npos || line[first] == '#') {
    message.skip = true;
    return message;
  }
  if (json) {
    auto parsed = fields::parse_json_message(line, dict);
    if (!parsed) return parsed.error();
    message.skip = parsed->type == "status";
    message.image = parsed->type == "image";
    message.field_list = std::move(parsed->field_list);
    return message;
  }
  auto words = split_words(line);
  if (!words) return words.error();
  auto list = fields::build_field_list(*words, dict);
  if (!list) return list.error();
  message.field_list = std::move(*list);
  return message;
}

std::optional<std::string> LineReader::next(client::Client& client) {
  for (;;) {
    if (const size_t newline = buffer_.find('\n'); newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return line;
    }
    if (eof_) {
      if (buffer_.empty()) return std::nullopt;
      return std::exchange(buffer_, {});  // a last line without its newline
    }
    if (g_stop_requested || client.poll(0) < 0 || !client.connected()) return std::nullopt;
    pollfd in{fd_, POLLIN, 0};
    if (::poll(&in, 1, 100) <= 0) continue;
    char chunk[65536];
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno != EINTR && errno != EAGAIN) {
      error_ = std::string("reading stdin: ") + std::strerror(errno);
      return std::nullopt;
    }
    if (n == 0) eof_ = true;
    if (n > 0) buffer_.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace tw::cli
