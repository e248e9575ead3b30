#include "ha/etcd.h"

#include <curl/curl.h>

#include <charconv>
#include <mutex>
#include <nlohmann/json.hpp>

#include "base/base64.h"

namespace tw::ha {
namespace {

using Json = nlohmann::json;

// The gateway writes int64 fields as JSON strings, and leaves out zeros.
int64_t number(const Json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end()) return 0;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (!it->is_string()) return 0;
  const std::string& digits = it->get_ref<const std::string&>();
  int64_t value = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return value;
}

std::string text(const Json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end() || !it->is_string()) return {};
  return base64_decode(it->get<std::string>()).value_or("");
}

LeaderKey leader_key(const Json& kv) {
  return LeaderKey{text(kv, "value"), number(kv, "create_revision"), number(kv, "lease")};
}

size_t append(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

Result<Json> parse(const Result<std::string>& answer) {
  if (!answer) return answer.error();
  Json json = Json::parse(*answer, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return Error{"etcd: not a JSON object: " + answer->substr(0, 200)};
  if (json.contains("error") || json.contains("code")) {
    return Error{"etcd: " + json.value("message", json.value("error", std::string("error")))};
  }
  return json;
}

}  // namespace

struct Etcd::Connection {
  Connection() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    curl = curl_easy_init();
    headers = curl_slist_append(nullptr, "Content-Type: application/json");
  }
  ~Connection() {
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
  }
  CURL* curl;
  curl_slist* headers;
};

Etcd::Etcd(EtcdOptions options) : options_(std::move(options)), connection_(std::make_unique<Connection>()) {
  if (options_.endpoints.empty()) options_.endpoints.push_back("http://127.0.0.1:2379");
}

Etcd::~Etcd() = default;

Result<std::string> Etcd::post(std::string_view path, const std::string& body) {
  CURL* curl = connection_->curl;
  std::string failures;
  for (size_t tried = 0; tried < options_.endpoints.size(); ++tried) {
    const std::string url = options_.endpoints[current_] + std::string(path);
    std::string answer;
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, connection_->headers);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout.count()));
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.timeout.count()));
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM for timeouts: other threads run
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
    const CURLcode code = curl_easy_perform(curl);
    if (code == CURLE_OK) return answer;  // etcd's own errors come as JSON: not a reason to move on
    failures += (failures.empty() ? "" : "; ") + url + ": " + curl_easy_strerror(code);
    current_ = (current_ + 1) % options_.endpoints.size();
  }
  return Error{"etcd unreachable: " + failures};
}

Result<Lease> Etcd::grant(int64_t ttl_s) {
  auto json = parse(post("/v3/lease/grant", Json{{"TTL", std::to_string(ttl_s)}}.dump()));
  if (!json) return json.error();
  if (json->contains("error") || number(*json, "ID") == 0) return Error{"etcd: no lease granted"};
  return Lease{number(*json, "ID"), number(*json, "TTL")};
}

Result<int64_t> Etcd::keep_alive(int64_t lease) {
  auto json = parse(post("/v3/lease/keepalive", Json{{"ID", std::to_string(lease)}}.dump()));
  if (!json) return json.error();
  auto result = json->find("result");
  if (result == json->end()) return Error{"etcd: keepalive without a result"};
  return number(*result, "TTL");
}

Status Etcd::revoke(int64_t lease) {
  auto json = parse(post("/v3/lease/revoke", Json{{"ID", std::to_string(lease)}}.dump()));
  if (!json) return json.error();
  return Ok{};
}

Result<int64_t> Etcd::time_to_live(int64_t lease) {
  auto json = parse(post("/v3/lease/timetolive", Json{{"ID", std::to_string(lease)}}.dump()));
  if (!json) return json.error();
  return number(*json, "TTL");
}

Result<Campaign> Etcd::campaign(std::string_view key, std::string_view value, int64_t lease) {
  const std::string k = base64_encode(key);
  const Json body{
      {"compare", Json::array({{{"target", "CREATE"}, {"key", k}, {"createRevision", "0"}}})},
      {"success", Json::array({{{"requestPut", {{"key", k}, {"value", base64_encode(value)}, {"lease", std::to_string(lease)}}}}})},
      {"failure", Json::array({{{"requestRange", {{"key", k}}}}})}};
  auto json = parse(post("/v3/kv/txn", body.dump()));
  if (!json) return json.error();
  const int64_t revision = number(json->value("header", Json::object()), "revision");
  if (json->value("succeeded", false)) return Campaign{true, LeaderKey{std::string(value), revision, lease}};
  for (const Json& response : json->value("responses", Json::array())) {
    for (const Json& kv : response.value("response_range", Json::object()).value("kvs", Json::array())) {
      return Campaign{false, leader_key(kv)};
    }
  }
  return Error{"etcd: the leader key is neither free nor held (it expired between compare and read?)"};
}

Result<std::optional<LeaderKey>> Etcd::leader(std::string_view key) {
  auto json = parse(post("/v3/kv/range", Json{{"key", base64_encode(key)}}.dump()));
  if (!json) return json.error();
  for (const Json& kv : json->value("kvs", Json::array())) return std::optional<LeaderKey>(leader_key(kv));
  return std::optional<LeaderKey>();
}

Result<bool> Etcd::resign(std::string_view key, int64_t epoch) {
  const std::string k = base64_encode(key);
  const Json body{{"compare", Json::array({{{"target", "CREATE"}, {"key", k}, {"createRevision", std::to_string(epoch)}}})},
                  {"success", Json::array({{{"requestDeleteRange", {{"key", k}}}}})}};
  auto json = parse(post("/v3/kv/txn", body.dump()));
  if (!json) return json.error();
  return json->value("succeeded", false);
}

}  // namespace tw::ha
