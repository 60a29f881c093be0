// Ranks that time nothing, with real ranks: a point-to-point benchmark on 4 ranks has two ends, and
// ranks 2 and 3 take part in the harness's agreements without timing a sample. Where the figure is
// the slowest rank's (accounting.max_over_ranks: NCCL send/recv on GPU events), the element-wise
// max must still complete on every rank. It once hung every such job on 4 H100s.
//
// A hang here would hold CTest until its timeout: an alarm ends the program within seconds instead,
// naming the test.
#include <gtest/gtest.h>

#include <csignal>
#include <unistd.h>

#include <vector>

#include "core/harness.h"
#include "core/context.h"
#include "tests/fake_workload.h"
#include "tests/mpiexec/world.h"

namespace commatlas {
namespace {

constexpr unsigned kHangSeconds = 60;  // 4 oversubscribed ranks on 2 cores finish in well under 1 s

extern "C" void on_hang(int) {
  static const char msg[] = "idle_ranks_mpi: a reduction over ranks did not complete (ranks disagree on its count)\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(1);
}

class IdleRanks : public ::testing::Test {
 protected:
  void SetUp() override {
    if (world->size() < 2) GTEST_SKIP() << "needs 2+ ranks: run under mpiexec (CTest does)";
    std::signal(SIGALRM, on_hang);
    alarm(kHangSeconds);
  }
  void TearDown() override { alarm(0); }
};

// Only ranks 0 and 1 have values, the others none: every rank ends with the pair's maximum.
TEST_F(IdleRanks, MaxOverRanksCountsARankWithoutValuesAsZero) {
  std::vector<double> v;
  if (world->rank() == 0) v = {1.0, 5.0, 3.0};
  if (world->rank() == 1) v = {4.0, 2.0, 3.5};
  world->max_over_ranks(v);
  EXPECT_EQ(v, (std::vector<double>{4.0, 5.0, 3.5})) << "rank " << world->rank();
}

// Through the harness, as a send/recv pair runs it: the two ends time samples, the other ranks
// return none, and the figure is the slower end's.
class PairWorkload final : public testing::FakeWorkload {
 public:
  PairWorkload() : FakeWorkload(world->rank() == 1 ? 2e-5 : 1e-5, slowest_rank()) {}
  void run(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds) override {
    if (world->rank() > 1) return;  // past the two ends: timed nothing
    FakeWorkload::run(samples, ops, seconds);
  }

 private:
  static Accounting slowest_rank() {
    Accounting a;
    a.bytes_per_op = 8;
    a.max_over_ranks = true;
    return a;
  }
};

TEST_F(IdleRanks, APairsFigureIsTheSlowerEndsOnEveryRank) {
  RunOptions o;
  o.time_budget_s = 0.005;
  o.precision = 0;
  o.min_samples = 3;
  Context ctx(o, *world, HostFacts{});
  PairWorkload w;
  const Measurement m = measure(w, ctx);
  ASSERT_GT(m.sample_count, 0);
  EXPECT_DOUBLE_EQ(m.stats.median, 2e-5) << "rank " << world->rank();
}

}  // namespace
}  // namespace commatlas
