#include "ha_support.h"

#include "admin/http_client.h"

namespace tw::it {

std::string ha_config(const std::string& etcd_endpoint, const std::string& store, const std::string& http_host) {
  return "http_listen = \"" + http_host + ":0\"\n[ha]\netcd = [\"" + etcd_endpoint + "\"]\nttl_s = " +
         std::to_string(kHaTtl) + "\n[store]\ndir = \"" + store +
         "\"\n[[queue]]\nname = \"orders\"\nsubscriptions = [\"ORD/>\"]\n";
}

std::unique_ptr<BrokerProcess> start_member(const std::string& etcd_endpoint, const testing::TempDir& store,
                                            BrokerOptions options) {
  options.config_toml = ha_config(etcd_endpoint, store.path() + "/store");
  // A test's private address (a network namespace's): no users file.
  if (options.host != "127.0.0.1") options.config_toml = "allow_anonymous = true\n" + options.config_toml;
  options.log_level = "info";
  return std::make_unique<BrokerProcess>(options);
}

Answer hello(uint16_t port) {
  RawClient client;
  if (!client.connect(port)) return {};
  auto frame = client.hello("ha-probe");
  if (!frame) return {};
  if (frame->type() == wire::MsgType::Welcome) return {true};
  if (auto e = frame->as<wire::ErrorMsg>()) return {false, e->code, std::string(e->text)};
  return {};
}

std::string admin_get(const BrokerProcess& broker, const char* path) {
  admin::HttpTarget http;
  http.port = broker.http_port();
  auto reply = admin::http_request(http, "GET", path);
  return reply && reply->status == 200 ? reply->body : std::string("no answer");
}

}  // namespace tw::it
