// Minimal Tickwire subscriber: prints every image, update and status under a
// pattern until interrupted. Run:
//   example_subscriber [PATTERN] [HOST:PORT]     (default DEMO/EQ/>)
#include <csignal>
#include <cstdio>

#include <tickwire/client/client.h>
#include <tickwire/client/message_format.h>

using namespace tw;

static volatile std::sig_atomic_t stop = 0;

int main(int argc, char** argv) {
  const char* pattern = argc > 1 ? argv[1] : "DEMO/EQ/>";
  client::Options options;
  options.client_name = "example-subscriber";
  if (!client::parse_server_address(client::resolve_server(argc > 2 ? argv[2] : ""), options.host, options.port))
    return 2;
  std::signal(SIGINT, [](int) { stop = 1; });

  client::Client client;
  // Handlers run on this thread, inside poll(). The message's views are valid
  // only during the call: copy what you keep.
  auto sub = client.subscribe(pattern, [](const client::Message& msg) {
    if (msg.gap) std::fprintf(stderr, "gap: expected seq %llu\n", static_cast<unsigned long long>(msg.expected_seq));
    std::printf("%s\n", client::format_text(msg, fields::Dictionary::builtin()).c_str());
  });
  if (!sub) {
    std::fprintf(stderr, "%s\n", sub.error().message.c_str());
    return 2;
  }
  client.on_connection([](client::ConnectionEvent e, std::string_view why) {
    std::fprintf(stderr, "%s %.*s\n", client::event_name(e), static_cast<int>(why.size()), why.data());
  });
  if (auto st = client.connect(options); !st) {  // the subscription is sent after WELCOME
    std::fprintf(stderr, "%s\n", st.error().message.c_str());
    return 1;
  }
  while (!stop && client.poll(200) >= 0) std::fflush(stdout);  // reconnects by itself
  client.close();
}
