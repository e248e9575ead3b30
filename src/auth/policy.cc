// Reads a users file with toml++ (header-only, exceptions off), like the
// broker config (src/config/toml_reader.cc): every error names file and line.
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include "auth/policy.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/ascii.h"
#include "topic/topic.h"

namespace tw::auth {

class PolicyReader {
 public:
  explicit PolicyReader(const std::string& source) : source_(source) {}

  Status read(const toml::table& root, Policy& policy) {
    for (auto&& [key, node] : root) {
      const std::string_view name = key.str();
      Status status = name == "users"       ? each_table(node, "users", [&](auto n, auto& t) { return user(policy, n, t); })
                      : name == "groups"    ? each_table(node, "groups", [&](auto n, auto& t) { return group(policy, n, t); })
                      : name == "anonymous" ? anonymous(policy, node)
                                            : Status(Error{where(node) + ": unknown key '" + std::string(name) + "'"});
      if (!status) return status;
    }
    return finish(policy);
  }

 private:
  template <typename Fn>
  Status each_table(const toml::node& node, const std::string& what, Fn&& fn) {
    if (!node.is_table()) return Error{where(node) + ": '" + what + "' must be a table"};
    for (auto&& [key, entry] : *node.as_table()) {
      if (!entry.is_table()) return Error{where(entry) + ": '" + what + "." + std::string(key.str()) + "' must be a table"};
      if (auto s = fn(std::string(key.str()), *entry.as_table()); !s) return s;
    }
    return Ok{};
  }

  Status user(Policy& policy, const std::string& name, const toml::table& table) {
    User u;
    u.name = name;
    for (auto&& [key, node] : table) {
      const std::string_view k = key.str();
      Status s = k == "password"       ? string(node, u.password_hash)
                 : k == "certificates" ? certificates(node, u.certificates)
                 : k == "groups"       ? strings(node, u.groups)
                 : k == "admin"        ? boolean(node, u.admin)
                 : k == "max_channels" ? count(node, u.max_channels)
                 : k == "rule"         ? rules(node, u.rules)
                                       : Status(Error{"unknown key"});
      if (!s) return Error{where(node) + ": users." + name + "." + std::string(k) + ": " + s.error().message};
    }
    if (!u.password_hash.empty() && u.password_hash.rfind("$argon2id$", 0) != 0) {
      return Error{where(table) + ": users." + name + ".password: not an argon2id hash (make one with 'tickwire passwd')"};
    }
    policy.users_.emplace(name, std::move(u));
    return Ok{};
  }

  Status group(Policy& policy, const std::string& name, const toml::table& table) {
    std::vector<Rule> list;
    for (auto&& [key, node] : table) {
      if (key.str() != "rule") return Error{where(node) + ": groups." + name + ": unknown key '" + std::string(key.str()) + "'"};
      if (auto s = rules(node, list); !s) return Error{where(node) + ": groups." + name + ".rule: " + s.error().message};
    }
    policy.groups_.emplace(name, std::move(list));
    return Ok{};
  }

  Status anonymous(Policy& policy, const toml::node& node) {
    if (!node.is_table()) return Error{where(node) + ": 'anonymous' must be a table"};
    for (auto&& [key, entry] : *node.as_table()) {
      if (key.str() != "rule") return Error{where(entry) + ": anonymous: unknown key '" + std::string(key.str()) + "'"};
      if (auto s = rules(entry, policy.anonymous_rules_); !s) return Error{where(entry) + ": anonymous.rule: " + s.error().message};
    }
    return Ok{};
  }

  // [[...rule]] tables: { allow | deny = [permissions], topics = [patterns], delay_s = N }.
  Status rules(const toml::node& node, std::vector<Rule>& out) {
    if (!node.is_array_of_tables()) return Error{"expected [[...rule]] tables"};
    for (const toml::node& entry : *node.as_array()) {
      Rule rule;
      if (auto s = one_rule(*entry.as_table(), rule); !s) return Error{"line " + line(entry) + ": " + s.error().message};
      out.push_back(std::move(rule));
    }
    return Ok{};
  }

  Status one_rule(const toml::table& table, Rule& rule) {
    std::vector<std::string> allow, deny;
    int64_t delay_s = 0;
    for (auto&& [key, node] : table) {
      const std::string_view k = key.str();
      Status s = k == "allow"     ? strings(node, allow)
                 : k == "deny"    ? strings(node, deny)
                 : k == "topics"  ? strings(node, rule.patterns)
                 : k == "delay_s" ? integer(node, delay_s)
                                  : Status(Error{"unknown key '" + std::string(k) + "'"});
      if (!s) return s;
    }
    if (allow.empty() == deny.empty()) return Error{"a rule has exactly one of 'allow' and 'deny'"};
    rule.allow = !allow.empty();
    for (const std::string& p : rule.allow ? allow : deny) {
      const uint8_t bit = p == "publish" ? kPublish : p == "subscribe" ? kSubscribe
                          : p == "subscribe-delayed" ? kSubscribeDelayed : p == "provide" ? kProvide
                          : p == "consume" ? kConsume : 0;
      if (bit == 0) {
        return Error{"unknown permission '" + p + "' (publish, subscribe, subscribe-delayed, provide, consume)"};
      }
      rule.permissions |= bit;
    }
    if (rule.patterns.empty()) return Error{"a rule needs 'topics'"};
    for (const std::string& p : rule.patterns) {
      if (auto e = topic::validate_pattern(p, topic::Limits{}); e != topic::Error::Ok) {
        return Error{"topic pattern '" + p + "': " + topic::describe(e)};
      }
    }
    const bool delayed = rule.allow && (rule.permissions & kSubscribeDelayed);
    if (delayed != (delay_s > 0)) return Error{"'delay_s' (> 0) goes with allow = [\"subscribe-delayed\"], and only there"};
    if (delay_s > 86'400 * 7) return Error{"'delay_s' is at most 604800 (a week)"};
    rule.delay_ms = static_cast<uint32_t>(delay_s * 1000);
    return Ok{};
  }

  Status finish(Policy& policy) {
    auto services = std::make_shared<ServiceSpace>();
    auto collect = [&](const std::vector<Rule>& list) {
      for (const Rule& r : list) {
        policy.rule_count_ += r.patterns.size();
        if (r.allow && (r.permissions & kProvide)) services->insert(services->end(), r.patterns.begin(), r.patterns.end());
      }
    };
    for (const auto& [name, u] : policy.users_) collect(u.rules);
    for (const auto& [name, list] : policy.groups_) collect(list);
    collect(policy.anonymous_rules_);
    for (auto& [name, u] : policy.users_) {
      std::vector<const Rule*> all;
      for (const Rule& r : u.rules) all.push_back(&r);
      for (const std::string& g : u.groups) {
        auto it = policy.groups_.find(g);
        if (it == policy.groups_.end()) return Error{source_ + ": users." + name + ": unknown group '" + g + "'"};
        for (const Rule& r : it->second) all.push_back(&r);
      }
      u.grants = std::make_shared<const Grants>(name, u.admin, all, services, u.max_channels);
    }
    std::vector<const Rule*> anon;
    for (const Rule& r : policy.anonymous_rules_) anon.push_back(&r);
    policy.anonymous_ = std::make_shared<const Grants>("", false, anon, services);
    return Ok{};
  }

  static Status string(const toml::node& node, std::string& out) {
    if (!node.is_string()) return Error{"expected a string"};
    out = node.as_string()->get();
    return Ok{};
  }
  static Status boolean(const toml::node& node, bool& out) {
    if (!node.is_boolean()) return Error{"expected true or false"};
    out = node.as_boolean()->get();
    return Ok{};
  }
  static Status count(const toml::node& node, uint32_t& out) {
    if (!node.is_integer()) return Error{"expected an integer"};
    const int64_t v = node.as_integer()->get();
    if (v < 1 || v > UINT32_MAX) return Error{"expected 1..4294967295"};
    out = static_cast<uint32_t>(v);
    return Ok{};
  }
  static Status integer(const toml::node& node, int64_t& out) {
    if (!node.is_integer()) return Error{"'delay_s': expected an integer"};
    out = node.as_integer()->get();
    return Ok{};
  }
  static Status strings(const toml::node& node, std::vector<std::string>& out) {
    if (!node.is_array()) return Error{"expected an array of strings"};
    for (const toml::node& item : *node.as_array()) {
      if (!item.is_string()) return Error{"expected an array of strings"};
      out.push_back(item.as_string()->get());
    }
    return Ok{};
  }
  static Status certificates(const toml::node& node, std::vector<CertificateName>& out) {
    std::vector<std::string> texts;
    if (auto s = strings(node, texts); !s) return s;
    for (const std::string& t : texts) out.push_back(certificate_entry(t));
    return Ok{};
  }
  static std::string line(const toml::node& node) { return std::to_string(node.source().begin.line); }
  std::string where(const toml::node& node) const { return source_ + ":" + line(node); }

  const std::string& source_;
};

Result<std::shared_ptr<const Policy>> Policy::parse(std::string_view text, const std::string& source_name) {
  toml::parse_result parsed = toml::parse(text, source_name);
  if (!parsed) {
    const auto& at = parsed.error().source().begin;
    return Error{source_name + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) + ": " +
                 std::string(parsed.error().description())};
  }
  auto policy = std::make_shared<Policy>();
  PolicyReader reader(source_name);
  if (auto status = reader.read(parsed.table(), *policy); !status) return status.error();
  return std::shared_ptr<const Policy>(std::move(policy));
}

Result<std::shared_ptr<const Policy>> Policy::load(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Error{"cannot read " + path + ": " + std::strerror(errno)};
  std::ostringstream text;
  text << file.rdbuf();
  return parse(text.str(), path);
}

const User* Policy::find_user(std::string_view name) const {
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : &it->second;
}

std::string Policy::sample_hash_params() const {
  for (const auto& [name, u] : users_) {
    // "$argon2id$v=19$m=65536,t=3,p=1$salt$hash": the fourth field.
    size_t at = u.password_hash.find("$m=");
    if (at == std::string::npos) continue;
    size_t end = u.password_hash.find('$', at + 1);
    return u.password_hash.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
  }
  return {};
}

CertificateName certificate_entry(std::string_view text) {
  using Kind = CertificateName::Kind;
  static constexpr std::pair<std::string_view, Kind> kKinds[] = {
      {"DNS", Kind::Dns}, {"email", Kind::Email}, {"URI", Kind::Uri}, {"IP", Kind::Ip}, {"IP Address", Kind::Ip}};
  const size_t colon = text.find(':');
  if (colon != std::string_view::npos) {
    for (const auto& [prefix, kind] : kKinds) {
      if (ascii::equal_ignoring_case(text.substr(0, colon), prefix)) return {kind, std::string(text.substr(colon + 1))};
    }
  }
  return {Kind::Subject, std::string(text)};
}

const User* Policy::find_by_certificate(const CertificateName& wanted) const {
  if (wanted.value.empty()) return nullptr;
  auto matches = [&](const CertificateName& entry) {
    if (entry.kind != wanted.kind) return false;
    // DNS names are case-insensitive (RFC 4343); every other kind is compared as written.
    return entry.kind == CertificateName::Kind::Dns ? ascii::equal_ignoring_case(entry.value, wanted.value) : entry.value == wanted.value;
  };
  for (const auto& [name, u] : users_) {
    for (const CertificateName& c : u.certificates) {
      if (matches(c)) return &u;
    }
  }
  return nullptr;
}

}  // namespace tw::auth
