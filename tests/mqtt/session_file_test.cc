// Stored MQTT sessions on disk (mqtt/session_file.h): what is written reads
// back; a truncated, corrupt or foreign file is refused with its reason, and
// at start such a file is set aside (logged) while the others load; an
// expired session's file is removed.
#include "mqtt/session_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>


namespace tw::mqtt {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kSecond = 1'000'000'000ull;

PersistedSession sample() {
  PersistedSession s;
  s.key = {"alice", "desk-7"};
  s.expiry_s = 3600;
  s.expires_at_ns = 1'700'000'000 * kSecond;
  s.subscriptions.push_back({"ORD/+/fills", 1, 2, 0, true, false});
  s.subscriptions.push_back({"$share/g/px/#", 0, 2, 9, false, true});
  return s;
}

void write(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

TEST(SessionFile, WhatIsWrittenReadsBack) {
  auto read = decode_session(encode_session(sample()));
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->key, sample().key);
  EXPECT_EQ(read->expiry_s, 3600u);
  EXPECT_EQ(read->expires_at_ns, sample().expires_at_ns);
  ASSERT_EQ(read->subscriptions.size(), 2u);
  const auto& a = read->subscriptions[0];
  EXPECT_EQ(a.filter, "ORD/+/fills");
  EXPECT_EQ(a.qos, 2);
  EXPECT_EQ(a.retain_handling, 1);
  EXPECT_TRUE(a.no_local);
  EXPECT_FALSE(a.retain_as_published);
  const auto& b = read->subscriptions[1];
  EXPECT_EQ(b.id, 9u);
  EXPECT_TRUE(b.retain_as_published);
}

TEST(SessionFile, EveryTruncationAndEveryFlippedByteIsRefused) {
  const std::vector<uint8_t> good = encode_session(sample());
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(decode_session(std::span(good).first(n))) << "truncated to " << n << " bytes";
  }
  for (size_t i = 0; i < good.size(); ++i) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= 0x40;
    EXPECT_FALSE(decode_session(bad)) << "byte " << i << " flipped";
  }
}

TEST(SessionFile, TheNameDependsOnUserAndClientIdApart) {
  EXPECT_EQ(session_file_name({"a", "b"}), session_file_name({"a", "b"}));
  EXPECT_NE(session_file_name({"ab", "c"}), session_file_name({"a", "bc"}));
  EXPECT_EQ(session_file_name({"", "x"}).size(), 16u);
}

TEST(SessionFile, ExpiryCountsFromTheEndOfTheConnectionOrFromTheStart) {
  PersistedSession s = sample();  // 3600 s from expires_at_ns
  EXPECT_EQ(remaining_ns(s, s.expires_at_ns + 600 * kSecond), 3000 * kSecond);
  EXPECT_EQ(remaining_ns(s, s.expires_at_ns + 3600 * kSecond), 0u);
  s.expires_at_ns = 0;  // connected when the broker stopped
  EXPECT_EQ(remaining_ns(s, 1'800'000'000 * kSecond), 3600 * kSecond);
  s.expiry_s = UINT32_MAX;
  EXPECT_EQ(remaining_ns(s, 1'800'000'000 * kSecond), UINT64_MAX);
}

TEST(SessionFile, LoadingSetsACorruptFileAsideRemovesAnExpiredOneAndKeepsTheRest) {
  const fs::path root = fs::temp_directory_path() / ("session_file_test." + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string dir = root.string() + "/mqtt-sessions";
  fs::create_directory(dir);
  PersistedSession live = sample();
  PersistedSession gone = sample();
  gone.key.client_id = "gone";
  gone.expiry_s = 10;
  std::vector<uint8_t> torn = encode_session(sample());
  torn.resize(torn.size() / 2);
  const uint64_t now = live.expires_at_ns + 60 * kSecond;
  write(dir + "/" + session_file_name(live.key), encode_session(live));
  write(dir + "/" + session_file_name(gone.key), encode_session(gone));
  write(dir + "/00000000000000aa", torn);
  const auto loaded = load_sessions(dir, now);
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(loaded[0].key, live.key);
  EXPECT_FALSE(fs::exists(dir + "/" + session_file_name(gone.key))) << "expired: removed";
  EXPECT_TRUE(fs::exists(dir + "/00000000000000aa.bad")) << "refused: set aside, not lost";
  EXPECT_TRUE(load_sessions(root.string() + "/absent", now).empty()) << "a missing directory is created, empty";
  fs::remove_all(root);
}

}  // namespace
}  // namespace tw::mqtt
