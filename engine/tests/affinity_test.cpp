// core/affinity.h: the measuring thread runs on one CPU of its block, and threads started inside a
// HelperThreadScope (as NCCL and NVSHMEM start theirs) get the whole block.
#include "core/affinity.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

namespace commatlas {
namespace {

int cpus_of_this_thread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
  return CPU_COUNT(&set);
}

TEST(Affinity, MeasuringThreadOnOneCpuHelpersOnTheBlock) {
  const int block = cpus_of_this_thread();
  if (block < 2) GTEST_SKIP() << "this process may run on " << block << " CPU: nothing to pin";
  // In a thread of its own, so the test runner's thread keeps its set.
  int pinned = 0, helper_started_inside = 0, helper_started_after = 0, after_scope = 0;
  std::thread measuring([&] {
    pin_measuring_thread();
    pinned = cpus_of_this_thread();
    {
      HelperThreadScope helpers;
      std::thread([&] { helper_started_inside = cpus_of_this_thread(); }).join();
    }
    after_scope = cpus_of_this_thread();
    std::thread([&] { helper_started_after = cpus_of_this_thread(); }).join();
  });
  measuring.join();
  EXPECT_EQ(pinned, 1);
  EXPECT_EQ(helper_started_inside, block);  // a library's thread started in the scope gets the block
  EXPECT_EQ(after_scope, 1);                // and the measuring thread is pinned again
  EXPECT_EQ(helper_started_after, 1);       // outside the scope a new thread inherits the one CPU
}

}  // namespace
}  // namespace commatlas

namespace commatlas {
namespace {

TEST(Affinity, PinsOnlyWhereEachRankHasItsOwnCpus) {
  // Blocks of their own (the launcher's cores_per_rank), one core each: pinned.
  EXPECT_TRUE(each_rank_has_its_own_cpus({"0-15", "16-31"}, {"vm", "vm"}));
  EXPECT_TRUE(each_rank_has_its_own_cpus({"0", "1"}, {"vm", "vm"}));
  EXPECT_TRUE(each_rank_has_its_own_cpus({"0-3,8", "4-7,9-10"}, {"a", "a"}));
  // Unbound (--bind-to none: the whole node each) or overlapping: left alone, or both would pin to CPU 0.
  EXPECT_FALSE(each_rank_has_its_own_cpus({"0-31", "0-31"}, {"vm", "vm"}));
  EXPECT_FALSE(each_rank_has_its_own_cpus({"0-16", "16-31"}, {"vm", "vm"}));
  // The same CPU numbers on two nodes are two CPUs.
  EXPECT_TRUE(each_rank_has_its_own_cpus({"0-31", "0-31"}, {"a", "b"}));
  // What cannot be read, or one rank: nothing to decide.
  EXPECT_FALSE(each_rank_has_its_own_cpus({"", "1"}, {"vm", "vm"}));
  EXPECT_FALSE(each_rank_has_its_own_cpus({"0-x", "1"}, {"vm", "vm"}));
  EXPECT_FALSE(each_rank_has_its_own_cpus({"3-1", "4"}, {"vm", "vm"}));
  EXPECT_FALSE(each_rank_has_its_own_cpus({"0"}, {"vm"}));
}

}  // namespace
}  // namespace commatlas
