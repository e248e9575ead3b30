// A reader racing a writer must only ever see whole publications. The writer
// publishes records whose fields are all equal, so a torn read (fields from
// two publications) shows as unequal fields. Run under ThreadSanitizer too
// (scripts/test.sh), which checks that no access in it is a data race.
#include "base/seqlock.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <thread>

namespace tw {
namespace {

struct Wide {
  std::array<uint64_t, 24> fields{};  // about as wide as a loop snapshot
};

Wide all(uint64_t value) {
  Wide w;
  w.fields.fill(value);
  return w;
}

bool whole(const Wide& w) {
  for (uint64_t f : w.fields) {
    if (f != w.fields[0]) return false;
  }
  return true;
}

TEST(Seqlock, ReadsZeroBeforeTheFirstPublication) {
  Seqlock<Wide> cell;
  EXPECT_EQ(cell.read().fields, all(0).fields);
}

TEST(Seqlock, ReadsTheLatestPublication) {
  Seqlock<Wide> cell;
  cell.publish(all(7));
  cell.publish(all(8));
  EXPECT_EQ(cell.read().fields, all(8).fields);
}

TEST(Seqlock, ConcurrentReaderNeverSeesATornPublication) {
  constexpr uint64_t kPublications = 200'000;
  Seqlock<Wide> cell;
  std::thread writer([&cell] {
    for (uint64_t v = 1; v <= kPublications; ++v) cell.publish(all(v));
  });
  uint64_t reads = 0, torn = 0, went_back = 0, last = 0;
  for (;;) {
    const Wide w = cell.read();
    ++reads;
    if (!whole(w)) ++torn;
    if (w.fields[0] < last) ++went_back;
    last = w.fields[0];
    if (last == kPublications) break;
  }
  writer.join();
  EXPECT_EQ(torn, 0u) << "of " << reads << " reads";
  EXPECT_EQ(went_back, 0u) << "a read older than the one before it";
}

}  // namespace
}  // namespace tw
