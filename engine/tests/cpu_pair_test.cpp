// The CPU-pair witness of a single process (core/cpu_pair.h): two helper threads on its first two
// allowed CPUs hand a cache line back and forth, and the reading names them. An MPI job's pair
// (rank 0 and a neighbour, through shared memory) is tested under mpiexec (tests/mpiexec/).
#include <gtest/gtest.h>

#include <sched.h>

#include <optional>
#include <string>
#include <thread>

#include "core/cpu_pair.h"
#include "core/group.h"
#include "core/host_activity.h"
#include "core/json.h"

namespace commatlas {
namespace {

TEST(CpuPair, TheFirstTwoAllowedCpusInOrder) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  if (CPU_COUNT(&allowed) < 2) GTEST_SKIP() << "this machine lets the test run on one CPU only";
  const auto pair = first_two_cpus();
  ASSERT_TRUE(pair.has_value());
  EXPECT_LT(pair->a, pair->b);
  EXPECT_TRUE(CPU_ISSET(pair->a, &allowed) && CPU_ISSET(pair->b, &allowed));
  for (int c = 0; c < pair->b; ++c)
    if (c != pair->a) EXPECT_FALSE(CPU_ISSET(c, &allowed)) << "CPU " << c << " comes first";
}

TEST(CpuPair, ASingleProcessReadsItsPairRepeatedly) {
  if (!first_two_cpus()) GTEST_SKIP() << "this machine lets the test run on one CPU only";
  SingleProcessGroup group;
  const auto pair = *first_two_cpus();
  for (int i = 0; i < 3; ++i) {
    const auto r = cpu_pair_round_trip(group);
    ASSERT_TRUE(r.has_value()) << "reading " << i;
    EXPECT_EQ(r->cpu_a, pair.a);
    EXPECT_EQ(r->cpu_b, pair.b);
    // A cache line's round trip between two CPUs: tens of nanoseconds at the least; a loop that
    // did not wait for its partner would read a few.
    EXPECT_GT(r->round_trip_ns, 10.0);
    EXPECT_LT(r->round_trip_ns, 1e6);
  }
}

TEST(CpuPair, OneAllowedCpuHasNoPair) {
  std::optional<CpuRoundTrip> r;
  bool pinned = false;
  std::thread t([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    pinned = sched_setaffinity(0, sizeof one, &one) == 0;
    SingleProcessGroup group;
    r = cpu_pair_round_trip(group);
  });
  t.join();
  ASSERT_TRUE(pinned);
  EXPECT_FALSE(r.has_value());
}

TEST(CpuPair, TheRecordCarriesThePairOrNull) {
  HostActivity a;
  auto written = [&] {
    JsonWriter w;
    write_host_activity(w, a);
    return w.str();
  };
  EXPECT_NE(written().find("\"cpu_pair\":null"), std::string::npos) << written();
  a.cpu_pair = CpuRoundTrip{0, 1, 412.5};
  EXPECT_NE(written().find("\"cpu_pair\":{\"cpus\":[0,1],\"round_trip_ns\":412.5}"), std::string::npos) << written();
}

}  // namespace
}  // namespace commatlas
