// Minimal Tickwire publisher: advertises one topic, publishes its full image,
// then a bid update every 100 ms. Run a broker, then:
//   example_publisher [HOST:PORT]     (default $TICKWIRE_SERVER or 127.0.0.1:9400)
#include <cstdio>
#include <vector>

#include <tickwire/client/client.h>
#include <tickwire/fields/field_list.h>

using namespace tw;

// Encodes BID (field 22) and, for the image, ASK (25) as exact decimals.
static std::vector<uint8_t> quote(int64_t bid_cents, bool with_ask) {
  std::vector<uint8_t> buf(64);
  fields::FieldListWriter w(buf);
  w.add_decimal(22, {bid_cents, -2});
  if (with_ask) w.add_decimal(25, {bid_cents + 2, -2});
  buf.resize(w.finish());
  return buf;
}

int main(int argc, char** argv) {
  client::Options options;
  options.client_name = "example-publisher";
  if (!client::parse_server_address(client::resolve_server(argc > 1 ? argv[1] : ""), options.host, options.port))
    return 2;

  client::Client client;  // single-threaded: this thread owns it
  if (auto st = client.connect(options); !st) {
    std::fprintf(stderr, "%s\n", st.error().message.c_str());
    return 1;
  }
  // advertise() sends REGISTER once; it is replayed automatically after a reconnect.
  auto id = client.advertise("DEMO/EQ/EXAMPLE", wire::PayloadKind::FieldList);
  if (!id) return 1;

  (void)client.publish(*id, quote(10000, true), /*image=*/true);  // the full image first
  for (int64_t bid = 10001; bid < 10100; ++bid) {
    // Buffered, then written by poll(); poll() also answers heartbeats and reconnects.
    if (auto st = client.publish(*id, quote(bid, false)); !st) std::fprintf(stderr, "%s\n", st.error().message.c_str());
    client.poll(100);
  }
  client.close();  // drains what is still buffered
}
