// Policy: the users, groups and rules of one users file (docs/security.md,
// "The users file"), with each user's Grants built once at load. Immutable:
// a reload parses a new Policy and swaps it in whole (authority.h).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "auth/certificate_names.h"
#include "auth/entitlements.h"
#include "tickwire/base/result.h"

namespace tw::auth {

struct User {
  std::string name;
  std::string password_hash;               // argon2id encoded ("$argon2id$v=19$..."); "" = no password login
  std::vector<CertificateName> certificates;  // TLS client certificate subjects, CNs or SANs mapped to this user
  std::vector<std::string> groups;
  bool admin = false;
  uint32_t max_channels = 0;               // new channels its open connections may have created (0: limits.max_channels_per_user)
  std::vector<Rule> rules;
  std::shared_ptr<const Grants> grants;    // its rules and its groups' rules
};

// A users-file `certificates` entry: "DNS:", "email:", "URI:" and "IP:"
// (the kind in any case; "IP Address:" too) name a subjectAltName of that
// kind; anything else names a subject (RFC 2253) or a common name.
CertificateName certificate_entry(std::string_view text);

class Policy {
 public:
  // Parses a users file; errors name the source, line and key.
  static Result<std::shared_ptr<const Policy>> parse(std::string_view text, const std::string& source_name);
  static Result<std::shared_ptr<const Policy>> load(const std::string& path);

  const User* find_user(std::string_view name) const;
  // The user a TLS client certificate name is mapped to, if any: only
  // entries of the name's kind match (a Subject name matches subject entries).
  const User* find_by_certificate(const CertificateName& name) const;
  // The rules of connections without a user (the [anonymous] table; none = nothing allowed).
  const std::shared_ptr<const Grants>& anonymous() const { return anonymous_; }
  size_t user_count() const { return users_.size(); }
  size_t rule_count() const { return rule_count_; }
  // "m=...,t=...,p=..." of one user's hash ("" if none): what an unknown user's check should cost.
  std::string sample_hash_params() const;

 private:
  friend class PolicyReader;
  std::map<std::string, User, std::less<>> users_;
  std::map<std::string, std::vector<Rule>, std::less<>> groups_;
  std::vector<Rule> anonymous_rules_;
  std::shared_ptr<const Grants> anonymous_;
  size_t rule_count_ = 0;
};

}  // namespace tw::auth
