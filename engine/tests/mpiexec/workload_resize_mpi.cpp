// The message workloads' resize (Workload::resize), with real ranks: its own program, which CTest
// starts under mpiexec with 2 and 4 ranks (engine/CMakeLists.txt), once more with the planted
// no-op (COMMATLAS_TEST_SKIP_MOVE=1, read once per process: the switch is the whole run's).
//
// Covered: every point-to-point and collective benchmark that can run in this job, each variant:
// host MPI everywhere; on a GPU machine also staged and GPU-aware MPI, CUDA IPC and NCCL with one
// rank per GPU (`mpiexec -n 2 build/engine/commatlas-mpiexec-tests` there). Variants in managed
// memory must refuse to resize (their page placement is part of what they measure).
//
// Every rank runs every test in the same order, and each test's control flow depends only on
// answers all ranks share (the harness's verdicts are agreed over ranks, local answers are put to
// a vote before use), so a failing expectation never leaves one rank waiting in a collective.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/harness.h"
#include "core/registry.h"
#include "core/verification.h"
#include "tests/mpiexec/world.h"

namespace commatlas {
namespace {

struct Case {
  const Benchmark* benchmark;
  Params params;
  std::string name;
  bool managed;  // must refuse to resize
};

constexpr std::uint64_t kLarge = 1ull << 20;
// Odd sizes on purpose: a message that is not whole words, a collective rounded down to blocks.
const std::uint64_t kSmaller[] = {(64ull << 10) + 12, 4096, 44, 12};

class WorkloadResize : public ::testing::Test {
 protected:
  void SetUp() override {
    if (world->size() < 2) GTEST_SKIP() << "needs 2+ ranks: run under mpiexec (CTest does)";
    RunOptions o;
    o.time_budget_s = 0.005;
    o.precision = 0;  // one batch fills the budget: what is tested here is the data, not the time
    o.min_samples = 3;
    ctx_ = std::make_unique<Context>(o, *world, discover_host());
  }

  // Point-to-point and collective benchmarks that can run in this job, one case per variant (the
  // patterns and the reference loops prepare each size afresh).
  std::vector<Case> cases() {
    std::vector<Case> out;
    for (const Benchmark* b : Registry::instance().all()) {
      const BenchmarkInfo info = b->info();
      if (info.category != Category::PointToPoint && info.category != Category::Collective) continue;
      if (!info.ranks.accepts(world->size()) || b->unavailable(*ctx_)) continue;
      for (const Params& p : b->variants(*ctx_))
        out.push_back({b, p, info.key + (p.describe().empty() ? "" : " " + p.describe()),
                       p.has("allocator") && p.text("allocator") == "managed"});
    }
    return out;
  }

  // nullptr where this size is not for this job: prepare() skipped it, with its reason, on every
  // rank (a collective with less than one element per rank block, GPU pointers a library refuses).
  std::unique_ptr<Workload> prepare(const Case& c, std::uint64_t bytes) {
    try {
      return c.benchmark->prepare(*ctx_, c.params, bytes);
    } catch (const Skip&) {
      return nullptr;
    }
  }
  // The runner's way in, and its vote: every rank must have given the same answer.
  bool resize(Workload& w, std::uint64_t bytes, const std::string& what) {
    const bool mine = w.resize_for_next_size(bytes);
    const bool all = world->all(mine);
    const bool any = !world->all(!mine);
    EXPECT_EQ(all, any) << what << ": ranks answered resize(" << bytes << ") differently";
    return all;
  }

  std::unique_ptr<Context> ctx_;
};

TEST_F(WorkloadResize, ASmallerSizeMeasuresAsIfPreparedThere) {
  if (test_skip_move()) GTEST_SKIP() << "the planted no-op run checks failures instead";
  const auto all = cases();
  ASSERT_GE(all.size(), 8u) << "host MPI alone: ping-pong, bandwidth, bibw and five collectives";
  for (const Case& c : all) {
    auto w = prepare(c, kLarge);
    if (!w) continue;
    const Measurement large = measure(*w, *ctx_);
    EXPECT_TRUE(large.verification.ok) << c.name << ": " << large.verification.detail;
    for (std::uint64_t bytes : kSmaller) {
      const std::string what = c.name + " at " + std::to_string(bytes) + " B";
      auto fresh = prepare(c, bytes);
      if (!fresh || c.managed) {
        EXPECT_FALSE(resize(*w, bytes, what)) << what << (c.managed ? ": managed memory" : ": prepare() skips this size");
        break;  // a refused resize leaves the workload to be dropped, as the runner does
      }
      ASSERT_TRUE(resize(*w, bytes, what)) << what;
      EXPECT_EQ(w->accounting().bytes_per_op, fresh->accounting().bytes_per_op) << what;
      EXPECT_EQ(w->accounting().latency_includes, fresh->accounting().latency_includes) << what;
      const Measurement resized = measure(*w, *ctx_);
      const Measurement prepared = measure(*fresh, *ctx_);
      EXPECT_TRUE(resized.verification.ok) << what << ": " << resized.verification.detail;
      EXPECT_TRUE(prepared.verification.ok) << what << ": " << prepared.verification.detail;
      // The check covers exactly the smaller size's messages, summed over the receiving ranks.
      EXPECT_GT(resized.verification.bytes_checked, 0u) << what;
      EXPECT_EQ(resized.verification.bytes_checked, prepared.verification.bytes_checked) << what;
      EXPECT_LE(resized.verification.bytes_checked, world->size() * bytes) << what;
    }
  }
}

// The receive side after a resize holds the larger size's message, right in its prefix: resize
// itself must make it wrong, so a receive that never happens cannot pass on it.
TEST_F(WorkloadResize, TheReceiveSideIsPoisonedByTheResize) {
  if (test_skip_move()) GTEST_SKIP() << "the planted no-op run checks failures instead";
  for (const Case& c : cases()) {
    if (c.managed) continue;
    auto w = prepare(c, kLarge);
    if (!w) continue;
    const Measurement large = measure(*w, *ctx_);
    EXPECT_TRUE(large.verification.ok) << c.name << ": " << large.verification.detail;
    ASSERT_TRUE(resize(*w, 4096, c.name)) << c.name;
    // No run in between: what the check finds is what resize left.
    EXPECT_FALSE(world->all(w->verify().ok)) << c.name << ": the 4 KiB prefix of the 1 MiB receive buffer passed the check";
  }
}

TEST_F(WorkloadResize, ALargerSizeThanTheAllocationIsANoNotAThrow) {
  for (const Case& c : cases()) {
    auto w = prepare(c, 4096);
    if (!w) continue;
    bool said = true;
    EXPECT_NO_THROW(said = resize(*w, 8192, c.name)) << c.name;
    EXPECT_FALSE(said) << c.name << ": 8 KiB inside buffers made for 4 KiB";
  }
}

// COMMATLAS_TEST_SKIP_MOVE=1: the probe and warm-up at the new size fill the destination (the
// runner's resize_for_next_size lets them move again), the timed batches move nothing, and the
// check must fail at every size, the resized ones included.
TEST_F(WorkloadResize, APlantedNoOpAfterAResizeFailsTheCheck) {
  if (!test_skip_move()) GTEST_SKIP() << "runs with COMMATLAS_TEST_SKIP_MOVE=1 (CTest's planted run)";
  for (const Case& c : cases()) {
    if (c.managed) continue;
    auto w = prepare(c, kLarge);
    if (!w) continue;
    EXPECT_FALSE(measure(*w, *ctx_).verification.ok) << c.name << " at 1 MiB";
    for (std::uint64_t bytes : {std::uint64_t{64ull << 10}, std::uint64_t{4096}}) {
      ASSERT_TRUE(resize(*w, bytes, c.name)) << c.name;
      const Measurement m = measure(*w, *ctx_);
      EXPECT_FALSE(m.verification.ok) << c.name << " resized to " << bytes << " B: a loop that moved nothing passed";
      if (world->rank() == 0) {
        EXPECT_FALSE(m.verification.detail.empty()) << c.name;
      }
    }
  }
}

}  // namespace
}  // namespace commatlas
