// tickwire pub TOPIC [--field NAME=VALUE ...] [--data TEXT] [--count N] [--rate R] [--image]
// tickwire pub TOPIC [--json] [--rate R] [--image] < FILE   (one message per line: message_lines.h)
// tickwire pub TOPIC --guaranteed ...   each message acknowledged once durable (docs/guaranteed.md)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>

#include "common.h"
#include "field_args.h"
#include "message_lines.h"

namespace tw::cli {

namespace {

struct PubOptions {
  std::string topic;
  std::vector<std::string> fields;
  std::string data;
  uint64_t count = 1;
  double rate = 0;
  bool image = false;
  bool json = false;  // stdin lines are JSON objects
  bool guaranteed = false;
};

// Publishes, waiting out back pressure instead of dropping the message.
// At `rate` messages per second from `start`, waits (serving the client) for the turn of message `sent`.
void pace(client::Client& client, std::chrono::steady_clock::time_point start, uint64_t sent, double rate) {
  if (rate <= 0) return;
  auto due = start + std::chrono::duration<double>(static_cast<double>(sent) / rate);
  while (std::chrono::steady_clock::now() < due && !g_stop_requested) client.poll(1);
}

bool publish_one(client::Client& client, client::PublisherId id, std::span<const uint8_t> payload, bool image) {
  for (;;) {
    Status sent = client.publish(id, payload, image);
    if (sent) return true;
    if (!client.connected() || g_stop_requested) {
      std::fprintf(stderr, "tickwire pub: %s\n", sent.error().message.c_str());
      return false;
    }
    client.poll(1);
  }
}

// What a source of messages gives the publishing loop.
enum class Next { Message, End, Failed };
struct Outgoing {
  std::vector<uint8_t> payload;
  bool image = false;
};
using Source = std::function<Next(client::Client&, Outgoing&)>;

// --field / --data: the same message --count times.
Source repeated(std::vector<uint8_t> payload, const PubOptions& opts) {
  return [payload = std::move(payload), image = opts.image, left = opts.count](client::Client&,
                                                                              Outgoing& out) mutable {
    if (left == 0) return Next::End;
    --left;
    out.payload = payload;
    out.image = image;
    return Next::Message;
  };
}

// stdin: one message per line (message_lines.h).
Source lines_of_stdin(const PubOptions& opts, const fields::Dictionary& dict) {
  auto reader = std::make_shared<LineReader>(STDIN_FILENO);
  return [reader, &opts, &dict, number = uint64_t{0}](client::Client& client, Outgoing& out) mutable {
    for (;;) {
      auto line = reader->next(client);
      if (!line) {
        if (reader->error().empty()) return Next::End;
        std::fprintf(stderr, "tickwire pub: %s\n", reader->error().c_str());
        return Next::Failed;
      }
      ++number;
      auto message = parse_message_line(*line, opts.json, dict);
      if (!message) {
        std::fprintf(stderr, "tickwire pub: stdin line %llu: %s\n", static_cast<unsigned long long>(number),
                     message.error().message.c_str());
        return Next::Failed;
      }
      if (message->skip) continue;
      out.payload = std::move(message->field_list);
      out.image = opts.image || message->image;
      return Next::Message;
    }
  };
}

// --guaranteed: every message waits for a window slot, and the command ends
// once the broker answered them all; any refusal is printed and fails it.
int run_guaranteed(const PubOptions& opts, client::Client& client, const Source& source) {
  uint64_t sent = 0, acked = 0, refused = 0;
  client.on_publish_ack([&](const client::PublishAnswer& a) {
    if (a.code == wire::Code::Ok) return void(++acked);
    ++refused;
    std::fprintf(stderr, "tickwire pub: message %llu refused: %s: %.*s\n", static_cast<unsigned long long>(a.message_id),
                 wire::code_name(a.code), static_cast<int>(a.text.size()), a.text.data());
  });
  auto start = std::chrono::steady_clock::now();
  Outgoing message;
  bool failed = false;
  while (!g_stop_requested && client.connected()) {
    pace(client, start, sent, opts.rate);
    const Next next = source(client, message);
    if (next != Next::Message) {
      failed = next == Next::Failed;
      break;
    }
    for (;;) {
      auto id = client.publish_guaranteed(opts.topic, message.payload);
      if (id) break;
      if (!client.connected() || g_stop_requested) {
        std::fprintf(stderr, "tickwire pub: %s\n", id.error().message.c_str());
        return kExitError;
      }
      client.poll(10);  // the window is full: wait for answers
    }
    ++sent;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (client.unanswered_publishes() > 0 && client.connected() && std::chrono::steady_clock::now() < deadline) {
    client.poll(10);
  }
  if (client.unanswered_publishes() > 0) {
    std::fprintf(stderr, "tickwire pub: %zu guaranteed message%s not answered (connection lost or timed out)\n",
                 client.unanswered_publishes(), client.unanswered_publishes() == 1 ? "" : "s");
    return kExitError;
  }
  std::printf("published %llu guaranteed message%s to %s: %llu acknowledged, %llu refused\n",
              static_cast<unsigned long long>(sent), sent == 1 ? "" : "s", opts.topic.c_str(),
              static_cast<unsigned long long>(acked), static_cast<unsigned long long>(refused));
  client.close();
  return failed || refused > 0 ? kExitError : kExitOk;
}

int run_pub(const PubOptions& opts, const CommonOptions& common, bool data_given, bool from_stdin) {
  auto dict = dictionary(common);
  if (!dict) {
    std::fprintf(stderr, "tickwire pub: %s\n", dict.error().message.c_str());
    return kExitError;
  }
  Source source;
  if (from_stdin) {
    if (::isatty(STDIN_FILENO))
      std::fprintf(stderr, "tickwire pub: reading messages from the terminal, one per line (%s); Ctrl-D ends\n",
                   opts.json ? "JSON objects" : "NAME=VALUE ...");
    source = lines_of_stdin(opts, **dict);
  } else if (data_given) {
    source = repeated(std::vector<uint8_t>(opts.data.begin(), opts.data.end()), opts);
  } else {
    auto built = build_field_list(opts.fields, **dict);
    if (!built) {
      std::fprintf(stderr, "tickwire pub: %s\n", built.error().message.c_str());
      return kExitError;
    }
    source = repeated(std::move(*built), opts);
  }
  const wire::PayloadKind kind = data_given ? wire::PayloadKind::Opaque : wire::PayloadKind::FieldList;
  auto options = client_options(common, "tickwire-pub");
  if (!options) {
    std::fprintf(stderr, "tickwire pub: %s\n", options.error().message.c_str());
    return kExitError;
  }
  options->reconnect = false;
  client::Client client;
  bool broker_error = false;
  client.on_error([&](const client::ErrorInfo& e) {
    broker_error = true;
    std::fprintf(stderr, "tickwire pub: broker error %s: %.*s\n", wire::code_name(e.code),
                 static_cast<int>(e.text.size()), e.text.data());
  });
  if (opts.guaranteed) {
    if (!connect_or_report(client, *options)) return kExitError;
    return run_guaranteed(opts, client, source);
  }
  auto id = client.advertise(opts.topic, kind);
  if (!id) {
    std::fprintf(stderr, "tickwire pub: %s\n", id.error().message.c_str());
    return kExitError;
  }
  if (!connect_or_report(client, *options)) return kExitError;

  auto start = std::chrono::steady_clock::now();
  uint64_t sent = 0;
  bool failed = false;
  Outgoing message;
  while (!g_stop_requested && !broker_error) {
    pace(client, start, sent, opts.rate);
    const Next next = source(client, message);
    if (next != Next::Message) {
      failed = next == Next::Failed;
      break;
    }
    if (!publish_one(client, *id, message.payload, message.image)) {
      failed = true;
      break;
    }
    if (++sent % 1024 == 0) client.poll(0);
  }
  if (sent == 0 && !broker_error) {  // nothing to confirm (an empty stdin)
    std::printf("published 0 messages to %s\n", opts.topic.c_str());
    return failed ? kExitError : kExitOk;
  }
  // A snapshot is answered after every earlier frame of this connection has
  // been handled, so it confirms the publishes (or surfaces the broker's ERROR).
  auto confirm = client.snapshot(opts.topic, 5000);
  if (broker_error || !confirm || !confirm->found) {
    if (!broker_error)
      std::fprintf(stderr, "tickwire pub: could not confirm the publish: %s\n",
                   confirm ? "topic not found" : confirm.error().message.c_str());
    return kExitError;
  }
  std::printf("published %llu message%s to %s (seq=%llu)\n", static_cast<unsigned long long>(sent),
              sent == 1 ? "" : "s", opts.topic.c_str(), static_cast<unsigned long long>(confirm->seq));
  client.close();
  const bool all_sent = from_stdin ? !g_stop_requested : sent == opts.count;
  return all_sent && !failed ? kExitOk : kExitError;
}

}  // namespace

void add_pub_command(CLI::App& app, const CommonOptions& common, int& exit_code) {
  auto opts = std::make_shared<PubOptions>();
  CLI::App* cmd = app.add_subcommand(
      "pub", "publish a field list (or opaque data) to a topic; without --field/--data, one message per line of stdin");
  cmd->add_option("topic", opts->topic, "topic, e.g. DEMO/EQ/AAPL")->required()->check(native_path());
  auto* field = cmd->add_option("-f,--field", opts->fields, "NAME=VALUE (dictionary name) or ID:TYPE=VALUE");
  auto* data = cmd->add_option("-d,--data", opts->data, "publish TEXT as an opaque payload");
  field->excludes(data);
  data->excludes(field);
  auto* count = cmd->add_option("-n,--count", opts->count, "messages to publish (with --field/--data)")
                    ->check(positive_number());
  cmd->add_option("-r,--rate", opts->rate, "messages per second, 0 = as fast as possible")
      ->check(non_negative_number());
  auto* image = cmd->add_flag("--image", opts->image, "replace the cached image instead of merging");
  cmd->add_flag("--guaranteed", opts->guaranteed,
                "guaranteed messaging: each message goes to the queues whose subscriptions match the topic and is "
                "acknowledged once durable; refusals are printed (docs/guaranteed.md)")
      ->excludes(image);
  auto* json = cmd->add_flag("--json", opts->json,
                             "stdin lines are JSON objects as `tickwire sub --json` prints them "
                             "({\"fields\":{\"BID\":\"189.25\"}}, or the bare object; \"image\" lines are "
                             "published as images, \"status\" lines skipped)");
  json->excludes(field)->excludes(data);
  cmd->footer(
      "Without --field or --data, each line of stdin is one field list message: NAME=VALUE words as --field "
      "takes them (BID=189.25 ASK=189.27 NAME=\"two words\"), or with --json a JSON object. Blank lines and "
      "lines starting with # are skipped; a bad line stops with its number (exit 2).\n"
      "  tickwire pub DEMO/EQ/AAPL < ticks.txt\n"
      "  tickwire sub --json 'DEMO/EQ/>' -n 100 | jq -c 'select(.topic==\"DEMO/EQ/AAPL\")' | "
      "tickwire pub --json COPY/AAPL");
  cmd->callback([opts, &common, &exit_code, data, field, count]() {
    const bool from_stdin = data->count() == 0 && field->count() == 0;
    if (from_stdin && count->count() > 0)
      throw CLI::ValidationError("--count", "with messages from stdin each line is one message; --count repeats a "
                                            "--field or --data message");
    exit_code = run_pub(*opts, common, data->count() > 0, from_stdin);
  });
}

}  // namespace tw::cli
