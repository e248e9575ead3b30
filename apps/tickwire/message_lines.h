// `tickwire pub TOPIC < FILE`: the messages of stdin, one per line.
//   text:   BID=189.25 ASK=189.27 NAME="two words"   (the --field syntax, one
//           assignment per word; double quotes keep spaces, \" and \\ inside them)
//   --json: {"type":"update","topic":"X","seq":3,"fields":{"BID":"189.25"}}
//           as `tickwire sub --json` prints it, or the bare {"BID":"189.25"}
// Blank lines and lines starting with '#' are skipped, and so are JSON
// "status" lines; a JSON "image" line is published as an image.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tickwire/base/result.h"
#include "tickwire/client/client.h"
#include "tickwire/fields/dictionary.h"

namespace tw::cli {

// The words of a text line: split at spaces and tabs, double quotes removed.
Result<std::vector<std::string>> split_words(std::string_view line);

struct LineMessage {
  bool skip = false;  // a blank, comment or status line: nothing to publish
  bool image = false;
  std::vector<uint8_t> field_list;
};
Result<LineMessage> parse_message_line(std::string_view line, bool json, const fields::Dictionary& dict);

// Lines of a file descriptor read without blocking the client: while it waits
// for a line it polls the client, so heartbeats and the broker's errors are
// handled while a slow producer (a pipe) thinks.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // The next line (without its newline), nullopt at the end of input, on a
  // read error (error() says which) or when the client's connection is lost.
  std::optional<std::string> next(client::Client& client);
  const std::string& error() const { return error_; }

 private:
  int fd_;
  std::string buffer_;
  bool eof_ = false;
  std::string error_;
};

}  // namespace tw::cli
