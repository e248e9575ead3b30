// Fuzzes HELLO with its version-2 fields (credentials flag, user, password)
// and what the broker does with them before any check: the first input byte
// is the HELLO flags, the rest its body. A HELLO that decodes must re-encode
// to the same bytes; its user is looked up in a users file and read as a
// certificate subject, and used as a topic pattern against entitlements, as
// a hostile client's strings would be. Any crash or sanitizer report aborts.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "auth/authority.h"
#include "auth/policy.h"
#include "topic/topic.h"
#include "tickwire/wire/codec.h"

namespace {

using namespace tw;

const auth::Policy& policy() {
  static auto parsed = auth::Policy::parse(R"(
[users.alice]
certificates = ["alice"]
[[users.alice.rule]]
allow = ["subscribe", "publish"]
topics = ["EQ/>", "*/IBM"]
[[users.alice.rule]]
deny = ["subscribe"]
topics = ["EQ/SECRET"]
[[users.alice.rule]]
allow = ["provide"]
topics = ["SVC/>"]
)", "fuzz.toml");
  if (!parsed) std::abort();
  return **parsed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 4096) return 0;
  std::vector<uint8_t> frame(wire::kHeaderSize + size - 1);
  const uint32_t length = static_cast<uint32_t>(frame.size());
  std::memcpy(frame.data(), &length, 4);
  frame[4] = static_cast<uint8_t>(wire::MsgType::Hello);
  frame[5] = data[0];
  if (size > 1) std::memcpy(frame.data() + wire::kHeaderSize, data + 1, size - 1);
  wire::Frame f;
  if (wire::split_frame(frame, 1u << 20, f) != wire::SplitResult::Frame) std::abort();
  wire::Hello hello;
  if (!wire::decode(f, hello)) return 0;
  std::vector<uint8_t> again(frame.size() + 16);
  const size_t n = wire::encode(again, hello);
  if (n != frame.size() || std::memcmp(again.data(), frame.data(), n) != 0) {
    std::fprintf(stderr, "hello_fuzz: decode then encode is not byte-identical\n");
    std::abort();
  }
  if (!hello.credentials) return 0;
  const auth::User* user = policy().find_user(hello.user);
  using Kind = auth::CertificateName::Kind;
  (void)policy().find_by_certificate({Kind::Subject, std::string(auth::common_name(hello.user))});
  (void)policy().find_by_certificate({Kind::Dns, std::string(hello.user)});
  const auth::Grants& grants = *policy().find_user("alice")->grants;
  if (user != nullptr && user->grants.get() != &grants) std::abort();
  // Entitlement questions are asked only of valid topics and patterns (the session checks first).
  if (topic::validate_pattern(hello.password, topic::Limits{}) == topic::Error::Ok) {
    (void)grants.subscribe(hello.password, 0);
    (void)grants.provide(topic::service_of(hello.password), hello.password);
    if (!topic::is_wildcard(hello.password)) {
      (void)grants.publish(hello.password);
      (void)grants.receives(hello.password, 0);
    }
  }
  return 0;
}
