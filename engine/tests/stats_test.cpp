#include <gtest/gtest.h>

#include <cmath>

#include "core/stats.h"

namespace commatlas {
namespace {

// Expected values are numpy.percentile(..., method="linear") computed by hand.
TEST(Percentile, MatchesNumpyLinearInterpolation) {
  const std::vector<double> v{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 25), 1.75);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 90), 3.7);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 100), 4.0);
  const std::vector<double> w{15, 20, 35, 40, 50};
  EXPECT_DOUBLE_EQ(percentile_sorted(w, 5), 16.0);
  EXPECT_DOUBLE_EQ(percentile_sorted(w, 50), 35.0);
  EXPECT_DOUBLE_EQ(percentile_sorted(w, 95), 48.0);
  EXPECT_DOUBLE_EQ(percentile_sorted(w, 99), 49.6);
}

TEST(Percentile, SingleAndEmpty) {
  EXPECT_DOUBLE_EQ(percentile_sorted({7.0}, 99), 7.0);
  EXPECT_DOUBLE_EQ(percentile_sorted({}, 50), 0.0);
}

TEST(Summarize, UnsortedInput) {
  const Stats s = summarize({4, 1, 3, 2});
  EXPECT_EQ(s.count, 4);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(5.0 / 3.0));  // n-1, like numpy.std(ddof=1)
  EXPECT_DOUBLE_EQ(s.cv, std::sqrt(5.0 / 3.0) / 2.5);
}

TEST(Reservoir, KeepsEverythingWhenSmall) {
  const std::vector<double> v{5, 3, 9};
  EXPECT_EQ(reservoir_sample(v, 3), v);
  EXPECT_EQ(reservoir_sample(v, 100), v);
}

TEST(Reservoir, KeepsCapacityInArrivalOrderWhenLarge) {
  std::vector<double> v;
  for (int i = 0; i < 10000; ++i) v.push_back(i);
  const auto kept = reservoir_sample(v, 256);
  ASSERT_EQ(kept.size(), 256u);
  for (std::size_t i = 1; i < kept.size(); ++i) EXPECT_LT(kept[i - 1], kept[i]);  // subset, in order, no repeats
  // Uniform over the whole run, not just its head: some kept samples come from the second half.
  EXPECT_GT(kept.back(), 5000);
}

TEST(Reservoir, DeterministicPerSeed) {
  std::vector<double> v;
  for (int i = 0; i < 1000; ++i) v.push_back(i);
  EXPECT_EQ(reservoir_sample(v, 10, 42), reservoir_sample(v, 10, 42));
  EXPECT_NE(reservoir_sample(v, 10, 42), reservoir_sample(v, 10, 43));
}

}  // namespace
}  // namespace commatlas
