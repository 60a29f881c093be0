#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstring>
#include <vector>

#include "core/group.h"
#include "core/host_activity.h"
#include "core/json.h"

namespace commatlas {
namespace {

// A real /proc/stat's first lines (2-vCPU VM): user nice system idle iowait irq softirq steal guest guest_nice.
constexpr const char* kProcStat =
    "cpu  5038764 3410 1011358 10022373 24103 0 9274 7049 120 0\n"
    "cpu0 2367673 1736 505907 5167852 2505 0 3340 3587 0 0\n";

TEST(CpuTicks, ReadsTheNodeLineAndCountsGuestTimeOnce) {
  const auto t = parse_cpu_ticks(kProcStat);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->busy, 5038764 + 3410 + 1011358 + 0 + 9274);  // guest (120) is inside user already
  EXPECT_EQ(t->idle, 10022373 + 24103);
  EXPECT_EQ(t->steal, 7049);
}

TEST(CpuTicks, EachCpusStealInOrder) {
  EXPECT_EQ(parse_cpu_steal(std::string(kProcStat) + "cpu1 2671091 1674 505450 4854521 21597 0 5934 3462 0 0\n"),
            (std::vector<std::int64_t>{3587, 3462}));
  EXPECT_TRUE(parse_cpu_steal("cpu  1 2 3 4 5 6 7 8\n").empty());  // the node's line is not a CPU's
}

TEST(CpuTicks, AnUnreadableLineGivesNothing) {
  EXPECT_FALSE(parse_cpu_ticks("cpu0 1 2 3 4 5 6 7 8\n").has_value());  // a CPU's line, not the node's
  EXPECT_FALSE(parse_cpu_ticks("cpu  1 2 3 4 5 6\n").has_value());      // a kernel without steal
  EXPECT_FALSE(parse_cpu_ticks("").has_value());
}

HostSample at(double s, std::int64_t busy, std::int64_t idle, std::int64_t steal) {
  HostSample h;
  h.ticks = CpuTicks{busy, idle, steal};
  h.at_s = s;
  return h;
}

TEST(HostActivity, OneHeldCpuShowsWhereTheNodesShareCannot) {
  // 32 CPUs over 9 ms: 29 ticks in all. CPU 5 lost 3 ticks (so at least 2), CPU 9 one
  // tick (perhaps a truncation edge, so nothing sure); the node's share needs more ticks.
  HostSample begin = at(0, 0, 0, 0), end = at(0.009, 0, 25, 4);
  begin.cpu_steal.assign(32, 100);
  end.cpu_steal = begin.cpu_steal;
  end.cpu_steal[5] += 3;
  end.cpu_steal[9] += 1;
  const HostActivity a = activity_between(begin, end, 0, 0, 0, true);
  EXPECT_FALSE(a.steal_share.has_value());
  EXPECT_EQ(a.steal_cpus, 1);
  EXPECT_DOUBLE_EQ(a.most_stolen_cpu_s, 2.0 / static_cast<double>(sysconf(_SC_CLK_TCK)));
  // CPU lists of different lengths (a CPU came online): no per-CPU claim.
  end.cpu_steal.push_back(0);
  EXPECT_EQ(activity_between(begin, end, 0, 0, 0, true).steal_cpus, 0);
}

TEST(HostActivity, SharesOfTheNodesTicksWithTheJobsOwnTimeTakenOff) {
  const double tick_s = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  // 400 ticks: 100 stolen, 200 busy of which the job's own CPU time is 50 ticks' worth.
  const auto own_us = static_cast<std::int64_t>(50 * tick_s * 1e6);
  const HostActivity a = activity_between(at(1, 1000, 1000, 10), at(2, 1200, 1100, 110), own_us, 7, 3, true);
  EXPECT_DOUBLE_EQ(a.window_s, 1.0);
  EXPECT_EQ(a.cpu_ticks, 400);
  ASSERT_TRUE(a.steal_share.has_value());
  EXPECT_DOUBLE_EQ(*a.steal_share, 0.25);
  ASSERT_TRUE(a.others_share.has_value());
  EXPECT_NEAR(*a.others_share, 150.0 / 400.0, 1e-6);
  EXPECT_EQ(a.involuntary_switches, 7);
  EXPECT_EQ(a.page_faults, 3);
}

TEST(HostActivity, NoShareFromTooFewTicksOrAnotherNodesRanks) {
  const HostActivity few = activity_between(at(0, 0, 0, 0), at(1, kMinTicksForShares - 2, 0, 1), 0, 0, 0, true);
  EXPECT_EQ(few.cpu_ticks, kMinTicksForShares - 1);
  EXPECT_FALSE(few.steal_share.has_value());
  EXPECT_FALSE(few.others_share.has_value());
  // Ranks on other nodes: their CPU time is not this node's, so no share of others is claimed.
  const HostActivity spread = activity_between(at(0, 0, 0, 0), at(1, 100, 100, 0), 0, 0, 0, false);
  EXPECT_TRUE(spread.steal_share.has_value());
  EXPECT_FALSE(spread.others_share.has_value());
  // Unreadable /proc/stat: counts of the process only.
  HostSample blind = at(0, 0, 0, 0);
  blind.ticks.reset();
  const HostActivity none = activity_between(blind, at(1, 100, 100, 0), 0, 4, 5, true);
  EXPECT_EQ(none.cpu_ticks, 0);
  EXPECT_FALSE(none.steal_share.has_value());
  EXPECT_EQ(none.involuntary_switches, 4);
}

TEST(HostActivity, AWindowCountsThePageFaultsMadeInIt) {
  SingleProcessGroup group;
  const std::size_t bytes = 8u << 20;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  madvise(p, bytes, MADV_NOHUGEPAGE);  // one fault a 4 KiB page, whatever the THP setting
  const HostActivityWindow window;
  std::memset(p, 1, bytes);
  const HostActivity a = window.close(group, true);
  munmap(p, bytes);
  EXPECT_GE(a.page_faults, static_cast<std::int64_t>(bytes / 4096 / 2));
  EXPECT_GT(a.window_s, 0);
  EXPECT_GE(a.involuntary_switches, 0);
}

TEST(HostActivity, RecordsNullForWhatItCouldNotTell) {
  HostActivity a;
  a.window_s = 0.01;
  a.cpu_ticks = 3;
  a.involuntary_switches = 2;
  JsonWriter w;
  write_host_activity(w, a);
  EXPECT_EQ(w.str(),
            "{\"window_s\":0.01,\"cpu_ticks\":3,\"steal_share\":null,\"others_share\":null,"
            "\"steal_cpus\":0,\"most_stolen_cpu_s\":0,\"involuntary_switches\":2,\"page_faults\":0,\"cpu_pair\":null}");
}

}  // namespace
}  // namespace commatlas
