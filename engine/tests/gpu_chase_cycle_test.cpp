// The random cycle behind every GPU-suite pointer chase: one cycle through all nodes, and a
// replay that agrees with following the links.
#include <gtest/gtest.h>

#include <stdexcept>

#include "core/random_cycle.h"

namespace commatlas {
namespace {

TEST(GpuChaseCycle, VisitsEveryNodeOnceBeforeReturning) {
  const RandomCycle c(1000, 7);
  std::uint32_t at = 0;
  for (std::size_t step = 1; step < c.size(); ++step) {
    at = c.next(at);
    ASSERT_NE(at, 0u) << "returned to the start after " << step << " steps";
  }
  EXPECT_EQ(c.next(at), 0u);
}

TEST(GpuChaseCycle, ReplayMatchesFollowingTheLinks) {
  const RandomCycle c(257, 3);
  std::uint32_t at = 0;
  for (std::uint64_t k = 0; k < 3 * 257 + 5; ++k) {
    ASSERT_EQ(c.after(k), at) << "step " << k;
    at = c.next(at);
  }
}

TEST(GpuChaseCycle, SeedChangesTheOrderAndTooSmallThrows) {
  EXPECT_NE(RandomCycle(64, 1).next_table(), RandomCycle(64, 2).next_table());
  EXPECT_EQ(RandomCycle(64, 1).next_table(), RandomCycle(64, 1).next_table());
  EXPECT_THROW(RandomCycle(1, 1), std::invalid_argument);
  const RandomCycle two(2, 9);
  EXPECT_EQ(two.next(0), 1u);
  EXPECT_EQ(two.next(1), 0u);
}

}  // namespace
}  // namespace commatlas
