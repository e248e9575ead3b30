#include "mqtt/session_file.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "base/log.h"
#include "store/crc32c.h"

namespace tw::mqtt {

namespace {

constexpr char kMagic[4] = {'T', 'W', 'M', 'S'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeader = 12;  // magic, version, body length
constexpr size_t kMaxBody = 64u << 20;

void put32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_string(std::vector<uint8_t>& out, std::string_view s) {
  put32(out, static_cast<uint32_t>(s.size()));
  out.insert(out.end(), s.begin(), s.end());
}

// Reads the body; any read past its end marks it bad, and the decode fails once at the end.
class Cursor {
 public:
  explicit Cursor(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  uint64_t number(size_t width) {
    if (!take(width)) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < width; ++i) v |= uint64_t{bytes_[at_ - width + i]} << (8 * i);
    return v;
  }
  std::string string() {
    const size_t n = number(4);
    if (!take(n)) return {};
    return std::string(reinterpret_cast<const char*>(bytes_.data() + at_ - n), n);
  }
  bool ok() const { return ok_; }
  bool at_end() const { return at_ == bytes_.size(); }

 private:
  bool take(size_t n) {
    if (!ok_ || bytes_.size() - at_ < n) return ok_ = false;
    at_ += n;
    return true;
  }
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
  bool ok_ = true;
};

uint32_t read32(std::span<const uint8_t> b, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{b[at + i]} << (8 * i);
  return v;
}

}  // namespace

std::vector<uint8_t> encode_session(const PersistedSession& s) {
  std::vector<uint8_t> body;
  put_string(body, s.key.user);
  put_string(body, s.key.client_id);
  put32(body, s.expiry_s);
  put64(body, s.expires_at_ns);
  put32(body, static_cast<uint32_t>(s.subscriptions.size()));
  for (const StoredSession::Subscription& sub : s.subscriptions) {
    put_string(body, sub.filter);
    body.push_back(sub.qos);
    body.push_back(sub.retain_handling);
    body.push_back(static_cast<uint8_t>((sub.no_local ? 1 : 0) | (sub.retain_as_published ? 2 : 0)));
    put32(body, sub.id);
  }
  std::vector<uint8_t> out(kMagic, kMagic + 4);
  put32(out, kVersion);
  put32(out, static_cast<uint32_t>(body.size()));
  out.insert(out.end(), body.begin(), body.end());
  put32(out, store::crc32c(body));
  return out;
}

Result<PersistedSession> decode_session(std::span<const uint8_t> bytes) {
  if (bytes.size() < kHeader + 4 || std::memcmp(bytes.data(), kMagic, 4) != 0) {
    return Error{"not a session file (" + std::to_string(bytes.size()) + " bytes)"};
  }
  if (uint32_t v = read32(bytes, 4); v != kVersion) return Error{"version " + std::to_string(v) + ", not 1"};
  const uint32_t length = read32(bytes, 8);
  if (length > kMaxBody || bytes.size() != kHeader + length + 4) {
    return Error{"truncated or overlong: " + std::to_string(bytes.size()) + " bytes for a body of " +
                 std::to_string(length)};
  }
  const auto body = bytes.subspan(kHeader, length);
  if (store::crc32c(body) != read32(bytes, kHeader + length)) return Error{"checksum mismatch"};
  Cursor in(body);
  PersistedSession s;
  s.key.user = in.string();
  s.key.client_id = in.string();
  s.expiry_s = static_cast<uint32_t>(in.number(4));
  s.expires_at_ns = in.number(8);
  const uint64_t count = in.number(4);
  for (uint64_t i = 0; i < count && in.ok(); ++i) {
    StoredSession::Subscription sub;
    sub.filter = in.string();
    sub.qos = static_cast<uint8_t>(in.number(1));
    sub.retain_handling = static_cast<uint8_t>(in.number(1));
    const uint64_t flags = in.number(1);
    sub.no_local = flags & 1;
    sub.retain_as_published = flags & 2;
    sub.id = static_cast<uint32_t>(in.number(4));
    if (sub.qos > 2 || sub.retain_handling > 2) return Error{"subscription with QoS or Retain Handling out of range"};
    s.subscriptions.push_back(std::move(sub));
  }
  if (!in.ok() || !in.at_end()) return Error{"malformed body"};
  return s;
}

std::vector<uint8_t> encode_queued_header(uint8_t qos, uint64_t expires_at_ns, std::span<const uint8_t> properties) {
  std::vector<uint8_t> out{qos};
  put64(out, expires_at_ns);
  put32(out, static_cast<uint32_t>(properties.size()));
  out.insert(out.end(), properties.begin(), properties.end());
  return out;
}

bool decode_queued(std::span<const uint8_t> record, QueuedMessage& out) {
  Cursor in(record);
  out.qos = static_cast<uint8_t>(in.number(1));
  out.expires_at_ns = in.number(8);
  const size_t length = in.number(4);
  if (!in.ok() || record.size() - 13 < length || out.qos < 1 || out.qos > 2) return false;
  out.properties = record.subspan(13, length);
  out.payload = record.subspan(13 + length);
  return true;
}

std::string session_file_name(const ClientKey& key) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a: stable across builds and restarts, unlike std::hash
  auto mix = [&h](std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  };
  mix(key.user);
  h = (h ^ 0xff) * 1099511628211ull;  // a byte no UTF-8 string has: ("ab","c") is not ("a","bc")
  mix(key.client_id);
  char name[17];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(h));
  return name;
}

uint64_t remaining_ns(const PersistedSession& s, uint64_t now_wall_ns) {
  if (s.expiry_s == UINT32_MAX) return UINT64_MAX;
  const uint64_t interval = uint64_t{s.expiry_s} * 1'000'000'000ull;
  const uint64_t since = s.expires_at_ns == 0 || s.expires_at_ns > now_wall_ns ? 0 : now_wall_ns - s.expires_at_ns;
  return since >= interval ? 0 : interval - since;
}

std::vector<PersistedSession> load_sessions(const std::string& dir, uint64_t now_wall_ns,
                                            std::vector<ClientKey>* expired_keys) {
  std::vector<PersistedSession> loaded;
  if (::mkdir(dir.c_str(), 0750) != 0 && errno != EEXIST) {
    TW_ERROR("MQTT sessions: cannot create %s: %s", dir.c_str(), std::strerror(errno));
    return loaded;
  }
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return loaded;
  size_t refused = 0, expired = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() != 16 || name.find('.') != std::string::npos) continue;  // ".", "..", temporaries, refused
    const std::string path = dir + "/" + name;
    std::ifstream file(path, std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    auto session = decode_session(bytes);
    if (!session) {
      ++refused;
      TW_WARN("MQTT sessions: %s refused: %s (kept as %s.bad)", path.c_str(), session.error().message.c_str(),
              name.c_str());
      (void)std::rename(path.c_str(), (path + ".bad").c_str());
    } else if (remaining_ns(*session, now_wall_ns) == 0) {
      ++expired;
      (void)std::remove(path.c_str());
      if (expired_keys != nullptr) expired_keys->push_back(session->key);
    } else {
      loaded.push_back(std::move(*session));
    }
  }
  ::closedir(d);
  TW_INFO("MQTT sessions: %zu stored session%s recovered from %s (%zu expired, %zu refused)", loaded.size(),
          loaded.size() == 1 ? "" : "s", dir.c_str(), expired, refused);
  return loaded;
}

}  // namespace tw::mqtt
