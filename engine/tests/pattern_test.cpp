#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/pattern.h"

namespace commatlas {
namespace {

std::vector<unsigned char> filled(std::size_t n, std::uint64_t seed) {
  std::vector<unsigned char> v(n);
  fill_pattern(v.data(), n, seed);
  return v;
}

TEST(Pattern, FillThenCheckPasses) {
  for (std::size_t n : {1u, 7u, 8u, 9u, 63u, 64u, 1000u, 4099u}) {
    const auto v = filled(n, 5);
    EXPECT_EQ(find_pattern_mismatch(v.data(), n, 5), n) << n;
    EXPECT_EQ(count_pattern_mismatches(v.data(), n, 5), 0u) << n;
  }
}

// Threads that each fill a part of one buffer (first touch in parallel) must write what one fill
// writes, wherever the cuts fall: inside a word, on a word, at the tail.
TEST(Pattern, PartsWriteWhatOneFillWrites) {
  const std::size_t n = 1027;
  const auto whole = filled(n, 11);
  for (const std::vector<std::size_t>& cuts : {std::vector<std::size_t>{0, n}, {0, 3, n}, {0, 8, 9, 500, n},
                                                 {0, 1, 2, 1024, 1026, n}, {0, 1027 - 3, n}}) {
    std::vector<unsigned char> v(n, 0);
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k) fill_pattern_part(v.data(), cuts[k], cuts[k + 1], 11);
    EXPECT_EQ(v, whole) << "cuts ending at " << cuts[cuts.size() - 2];
  }
  std::vector<unsigned char> v(n, 0);
  fill_pattern_part(v.data(), 100, 200, 11);  // only its part
  EXPECT_EQ(v[99], 0);
  EXPECT_EQ(v[200], 0);
  EXPECT_TRUE(std::equal(v.begin() + 100, v.begin() + 200, whole.begin() + 100));
}

TEST(Pattern, UnalignedDestination) {
  std::vector<unsigned char> storage(1000 + 3);
  fill_pattern(storage.data() + 3, 1000, 9);
  EXPECT_EQ(find_pattern_mismatch(storage.data() + 3, 1000, 9), 1000u);
}

TEST(Pattern, SingleFlippedByteAnywhereIsCaught) {
  const std::size_t n = 1027;  // whole words and a tail
  for (std::size_t at : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{500},
                         std::size_t{1023}, std::size_t{1024}, n - 1}) {
    auto v = filled(n, 3);
    v[at] ^= 0x01;
    EXPECT_EQ(find_pattern_mismatch(v.data(), n, 3), at);
    EXPECT_EQ(count_pattern_mismatches(v.data(), n, 3), 1u);
  }
}

TEST(Pattern, ShiftedCopyIsCaught) {
  const std::size_t n = 4096;
  const auto src = filled(n + 1, 3);
  // A copy that started one byte late: every byte is a real pattern byte, at the wrong place.
  EXPECT_LT(find_pattern_mismatch(src.data() + 1, n, 3), n);
  // Nor does a copy shifted by a whole word pass.
  const auto wide = filled(n + 8, 3);
  EXPECT_LT(find_pattern_mismatch(wide.data() + 8, n, 3), n);
}

TEST(Pattern, WrongSeedIsCaught) {
  const auto v = filled(256, 1);
  EXPECT_EQ(find_pattern_mismatch(v.data(), 256, 2), 0u);
  EXPECT_GT(count_pattern_mismatches(v.data(), 256, 2), 200u);
}

TEST(Pattern, ZeroedBufferIsCaught) {
  std::vector<unsigned char> zeros(64, 0);
  EXPECT_LT(find_pattern_mismatch(zeros.data(), zeros.size(), 1), zeros.size());
}

}  // namespace
}  // namespace commatlas
