#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <thread>
#include <sstream>

#include "core/harness.h"
#include "core/registry.h"
#include "core/runner.h"
#include "tests/fake_workload.h"

namespace commatlas {
namespace {

using testing::FakeWorkload;
using testing::RecordingGroup;

// The fixed mode (--precision off): one batch fills the budget.
RunOptions options_with_budget(double budget_s) {
  RunOptions o;
  o.time_budget_s = budget_s;
  o.precision = 0;
  return o;
}

RunOptions precision_options(double precision, double budget_s) {
  RunOptions o;
  o.time_budget_s = budget_s;
  o.precision = precision;
  return o;
}

TEST(MedianInterval, OrderStatisticsOfTheBinomialTails) {
  std::vector<double> five{1, 2, 3, 4, 5};
  EXPECT_FALSE(median_interval(five).defined);  // P(all 5 on one side) = 6.25% > 5%
  std::vector<double> six{1, 2, 3, 4, 5, 6};
  const MedianInterval ci6 = median_interval(six);
  ASSERT_TRUE(ci6.defined);  // [x(1), x(6)]: 1 - 2/64 = 96.9%
  EXPECT_EQ(ci6.low, 1);
  EXPECT_EQ(ci6.high, 6);
  std::vector<double> many(100);
  std::iota(many.begin(), many.end(), 1.0);
  const MedianInterval ci = median_interval(many);
  // n = 100: the 95% interval is [x(40), x(61)] (the textbook table's ranks).
  EXPECT_EQ(ci.low, 40);
  EXPECT_EQ(ci.high, 61);
  EXPECT_NEAR(ci.half_width, 10.5 / 50.5, 1e-12);
}

TEST(Harness, StableWorkloadStopsOnPrecisionEarly) {
  RecordingGroup group;
  Context ctx(precision_options(0.005, 0.1), group, HostFacts{});
  FakeWorkload w(1e-4, {});
  w.noise = 0.001;  // +-0.1%: well inside +-0.5%
  const Measurement m = measure(w, ctx);
  EXPECT_EQ(m.stop_reason, StopReason::Precision);
  EXPECT_EQ(m.batches, 1);
  EXPECT_LE(m.precision_reached, 0.005);
  EXPECT_DOUBLE_EQ(m.precision_target, 0.005);
  // A few samples, far from the 0.1 s the budget would have bought (1000 samples of 100 us).
  EXPECT_LT(static_cast<double>(m.sample_count) * 1e-4, 0.01);
  EXPECT_EQ(w.runs.back().samples, m.sample_count);
}

TEST(Harness, NoisyWorkloadRunsToTheBudgetAndSaysSo) {
  RecordingGroup group;
  Context ctx(precision_options(0.005, 0.05), group, HostFacts{});
  FakeWorkload w(1e-4, {});
  w.noise = 0.2;  // uniform +-20%: 500 samples narrow the median's interval to ~+-2%, not +-0.5%
  const Measurement m = measure(w, ctx);
  EXPECT_EQ(m.stop_reason, StopReason::Budget);
  EXPECT_GT(m.precision_reached, 0.005);
  EXPECT_GT(m.batches, 2);  // it grew its batches before giving up
  // The timed samples fill the budget; the last batch is sized on the mean so far, so it can pass
  // it by the noise of its own samples, no more.
  const double timed = m.stats.mean * static_cast<double>(m.sample_count) * static_cast<double>(m.ops_per_sample);
  EXPECT_LE(timed, 0.05 * (1 + 0.2));
  EXPECT_GT(timed, 0.05 * 0.9);
  // One run of the workload per batch (after the probe and the warm-up).
  std::int64_t timed_calls = 0;
  for (std::size_t i = w.runs.size() - static_cast<std::size_t>(m.batches); i < w.runs.size(); ++i) timed_calls += w.runs[i].samples;
  EXPECT_EQ(timed_calls, m.sample_count);
}

// Runs longer than its samples say (like reference.mpi_pingpong: one reported sample per 2000
// timed half round trips) and reports noisy samples that never reach the target.
class UnderReportingWorkload final : public Workload {
 public:
  Accounting accounting() const override {
    Accounting a;
    a.one_op_per_sample = true;
    return a;
  }
  void run(std::int64_t, std::int64_t, std::vector<double>& seconds) override {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    seconds.push_back(calls % 2 ? 1e-6 : 2e-6);
  }
  Verification verify() override { return {true, 1, ""}; }
  VerifyMethod verify_method() const override { return VerifyMethod::Bytes; }
  int calls = 0;

 private:
  void prepare_batch() override {}
};

TEST(Harness, BudgetCountsWallTimeWhenSamplesUnderstateIt) {
  RecordingGroup group;
  Context ctx(precision_options(0.005, 0.02), group, HostFacts{});
  UnderReportingWorkload w;
  const Measurement m = measure(w, ctx);
  EXPECT_EQ(m.stop_reason, StopReason::Budget);
  // About 0.02 s of 2 ms batches, not the 100000 samples the reported 1-2 us would allow.
  EXPECT_LE(m.batches, 12);
}

TEST(Harness, MaxSamplesStopsSamplingAndSaysSo) {
  RecordingGroup group;
  RunOptions o = precision_options(0.005, 10);
  o.max_samples = 200;
  Context ctx(o, group, HostFacts{});
  FakeWorkload w(1e-4, {});
  w.noise = 0.2;
  const Measurement m = measure(w, ctx);
  EXPECT_EQ(m.stop_reason, StopReason::MaxSamples);
  EXPECT_EQ(m.sample_count, 200);
}

TEST(Harness, FixedModeIsOneBatchAndSaysSo) {
  RecordingGroup group;
  Context ctx(options_with_budget(0.01), group, HostFacts{});
  FakeWorkload w(1e-4, {});
  const Measurement m = measure(w, ctx);
  EXPECT_EQ(m.stop_reason, StopReason::Fixed);
  EXPECT_EQ(m.batches, 1);
  EXPECT_EQ(m.precision_target, 0);
}

TEST(Harness, HintFromThePreviousSizeReplacesTheProbe) {
  RecordingGroup group;
  Context ctx(precision_options(0.005, 0.01), group, HostFacts{});
  Accounting a;
  a.bytes_per_op = 2048;
  FakeWorkload w(2e-6, a);
  const MeasureHint hint{1e-6, 1024};  // half the bytes, half the time
  const Measurement m = measure(w, ctx, &hint);
  EXPECT_EQ(w.runs.front().samples, 1);  // the first op only, no 3-op probe
  // Warm-up sized on the hint scaled to twice the bytes: a tenth of the budget at ~2 us x ~5 ops.
  const double t_est = 1e-6 * (2048.0 / 1024.0);
  const auto ops = static_cast<std::int64_t>(std::ceil(ctx.options.min_sample_s / t_est));
  EXPECT_EQ(w.runs[1].ops, ops);
  // A first chunk, then topped up at the warm time (here the hint's) to the whole tenth.
  const auto planned = static_cast<std::int64_t>(0.1 * 0.01 / (t_est * static_cast<double>(ops)));
  EXPECT_EQ(w.runs[1].samples, std::min(planned, kWarmupChunk));
  EXPECT_EQ(m.warmup_samples, planned);
  EXPECT_DOUBLE_EQ(m.seconds_per_op, 2e-6);
}

// Samples whose fixed cost (a blocked-start kernel, events, a synchronize) exceeds their ops' own
// time: the warm-up is a tenth of the budget in wall time, as the timed batches count theirs, not
// the 200 samples that the ops' 50 us alone would fit in it.
TEST(Harness, WarmupIsATenthOfTheBudgetInWallTime) {
  RecordingGroup group;
  Context ctx(precision_options(0.005, 0.1), group, HostFacts{});
  Accounting a;
  a.min_sample_s = 50e-6;
  FakeWorkload w(50e-6, a);  // ops of 50 us, one a sample
  w.sample_wall_s = 1e-3;    // each taking at least 1 ms of wall
  const Measurement m = measure(w, ctx);
  ASSERT_GE(w.runs.size(), 3u);
  EXPECT_EQ(w.runs[1].samples, 3);  // the probe
  // Planned on the ops' time: 0.01 s / 50 us = 200 samples. The first chunk's 16 samples took at
  // least 16 ms of wall, more than the tenth: nothing is topped up, and timing begins.
  EXPECT_EQ(w.runs[2].samples, kWarmupChunk);
  EXPECT_EQ(m.warmup_samples, kWarmupChunk);
  EXPECT_EQ(m.warmup.rounds, 1);
  EXPECT_GE(m.cost.warmup_s, 0.016);
}

// A batch re-sized on the warm time is warmed at its own size: the chunk's samples at the old size
// count towards the tenth, but not towards the samples that the steady-state check compares.
TEST(Harness, ReSizedBatchIsWarmedAtItsOwnSize) {
  RecordingGroup group;
  Context ctx(precision_options(0.005, 0.1), group, HostFacts{});
  Accounting a;
  a.min_sample_s = std::ldexp(1.0, -14);  // 61 us; with ops of 2^-20 s, exactly 64 ops a sample
  FakeWorkload w(std::ldexp(1.0, -20), a);
  w.slow_ops = 4;  // the first op and the probe: 1 ms each, so one op per sample is planned
  w.slow_seconds_per_op = 1e-3;
  const Measurement m = measure(w, ctx);
  ASSERT_GE(w.runs.size(), 4u);
  EXPECT_EQ(w.runs[2].ops, 1);
  EXPECT_EQ(w.runs[2].samples, 10);  // 0.01 s planned at 1 ms: the chunk is all of it
  EXPECT_EQ(w.runs[3].ops, 64);      // re-sized on the warm time
  // The chunk's 10 samples of 1 us spent 10 us of the 0.01 s: topped up at 61 us a sample, 163
  // samples (the plan's 10 would have left the tenth 94% short).
  EXPECT_EQ(w.runs[3].samples, 163);
  EXPECT_EQ(m.warmup_samples, 163);
  EXPECT_EQ(m.warmup.samples_per_round, 163);
  EXPECT_EQ(m.ops_per_sample, 64);
}

// A chunk at the old batch size that already took the whole tenth in wall time still leaves the
// re-sized batch kMinWarmSamples samples of its own: the steady-state check and the sample time
// need them.
TEST(Harness, ReSizedBatchGetsSamplesOfItsOwnWhenTheTenthIsSpent) {
  RecordingGroup group;
  Context ctx(precision_options(0.005, 0.1), group, HostFacts{});
  Accounting a;
  a.min_sample_s = std::ldexp(1.0, -14);
  FakeWorkload w(std::ldexp(1.0, -20), a);
  w.slow_ops = 4;  // planned at one op per sample, 10 samples, as above
  w.slow_seconds_per_op = 1e-3;
  w.sample_wall_s = 1.5e-3;  // the chunk's 10 samples take 15 ms of wall, more than the 10 ms tenth
  const Measurement m = measure(w, ctx);
  ASSERT_GE(w.runs.size(), 4u);
  EXPECT_EQ(w.runs[2].samples, 10);
  EXPECT_EQ(w.runs[3].ops, 64);
  EXPECT_EQ(w.runs[3].samples, kMinWarmSamples);
  EXPECT_EQ(m.warmup_samples, kMinWarmSamples);
}

TEST(Harness, BatchesFastOperationsAndFillsTheBudget) {
  RecordingGroup group;
  Context ctx(options_with_budget(0.01), group, HostFacts{});
  const double t_op = 1.1e-7;
  FakeWorkload w(t_op);
  const Measurement m = measure(w, ctx);
  const double ops = static_cast<double>(m.ops_per_sample), samples = static_cast<double>(m.sample_count);
  // The fewest ops that make a sample last min_sample_s (timer cost amortised, no more).
  EXPECT_GE(ops * t_op, ctx.options.min_sample_s * (1 - 1e-9));
  EXPECT_LT((ops - 1) * t_op, ctx.options.min_sample_s);
  // The most samples that fit the budget.
  EXPECT_LE(samples * ops * t_op, 0.01 * (1 + 1e-9));
  EXPECT_GT((samples + 1) * ops * t_op, 0.01);
  EXPECT_GT(m.sample_count, ctx.options.min_samples);
  EXPECT_DOUBLE_EQ(m.stats.median, t_op);
  EXPECT_EQ(m.samples.size(), ctx.options.reservoir);
  // The timed call is the last one, with exactly the reported counts.
  EXPECT_EQ(w.runs.back().samples, m.sample_count);
  EXPECT_EQ(w.runs.back().ops, m.ops_per_sample);
  EXPECT_TRUE(m.verification.ok);
}

TEST(Harness, TimedBatchIsPreparedRightBeforeItRuns) {
  RecordingGroup group;
  Context ctx(options_with_budget(0.01), group, HostFacts{});
  FakeWorkload w(1e-6);
  const Measurement m = measure(w, ctx);
  // The batch the data check follows was prepared (destination poisoned) right before it ran;
  // the untimed probe was not, so a planted no-op still finds the probe's bytes to fool a check
  // that relied on them.
  ASSERT_GE(w.runs.size(), 2u);
  EXPECT_TRUE(w.runs.back().prepared);
  EXPECT_FALSE(w.runs.front().prepared);
  EXPECT_EQ(m.verification.method, VerifyMethod::Bytes);
}

TEST(Harness, WorkloadClockCanAskForLongerSamples) {
  RecordingGroup group;
  Context ctx(options_with_budget(0.01), group, HostFacts{});
  Accounting a;
  a.min_sample_s = 50e-6;  // an event clock: the run's 10 us default would batch only two ops
  const double t_op = 8e-6;
  FakeWorkload w(t_op, a);
  const Measurement m = measure(w, ctx);
  EXPECT_EQ(m.ops_per_sample, 7);  // ceil(50 / 8)
  // A workload asking for less than the run's default does not lower it.
  a.min_sample_s = 1e-9;
  FakeWorkload fast(1e-7, a);
  EXPECT_EQ(measure(fast, ctx).ops_per_sample, static_cast<std::int64_t>(std::ceil(ctx.options.min_sample_s / 1e-7)));
}

TEST(Harness, BatchIsSizedAgainOnceWarm) {
  RecordingGroup group;
  Context ctx(options_with_budget(0.01), group, HostFacts{});
  Accounting a;
  a.min_sample_s = 50e-6;
  FakeWorkload w(8e-6, a);
  w.slow_ops = 4;  // the probe's calls (1 + 3) take 60 us each, longer than a whole sample
  w.slow_seconds_per_op = 60e-6;
  const Measurement m = measure(w, ctx);
  EXPECT_EQ(m.ops_per_sample, 7);  // sized on the warm 8 us, not on the 60 us probe
  EXPECT_EQ(w.runs.back().ops, 7);
  EXPECT_DOUBLE_EQ(m.stats.median, 8e-6);
}

TEST(Harness, BytesCheckedAreSummedOverRanks) {
  RecordingGroup group;  // reports a second rank that checked as much again
  Context ctx(options_with_budget(0.001), group, HostFacts{});
  FakeWorkload w(1e-6);
  EXPECT_EQ(measure(w, ctx).verification.bytes_checked, 128u);  // 64 here + 64 there
}

TEST(Harness, SlowOperationsGetMinSamples) {
  RecordingGroup group;
  Context ctx(options_with_budget(0.2), group, HostFacts{});
  FakeWorkload w(0.1);
  const Measurement m = measure(w, ctx);
  EXPECT_EQ(m.ops_per_sample, 1);
  EXPECT_EQ(m.sample_count, ctx.options.min_samples);
}

// A first op that alone takes a fifth of the budget needs no probe: the point gets one op per sample
// and min_samples samples anyway. A 16 MiB host MPI bibw op (0.29 s on 2x H100) paid 3 probe ops.
TEST(Harness, SlowFirstOpSizesThePointWithoutAProbe) {
  RecordingGroup group;
  Context ctx(precision_options(0.005, 0.1), group, HostFacts{});
  FakeWorkload w(0.05);
  Measurement m = measure(w, ctx);
  EXPECT_EQ(m.warmup.sized_on, SizedOn::FirstOp);
  ASSERT_GE(w.runs.size(), 3u);
  EXPECT_EQ(w.runs[0].samples, 1);  // the first op
  EXPECT_EQ(w.runs[1].samples, 2);  // straight to the warm-up: no 3-op probe
  EXPECT_EQ(m.warmup_samples, 2);
  EXPECT_EQ(m.sample_count, ctx.options.min_samples);
  // Its confirmation re-warms with one such op, not two.
  std::size_t before = w.runs.size();
  ASSERT_TRUE(confirm(w, ctx, m).ok);
  EXPECT_EQ(w.runs[before].samples, 1);
  EXPECT_EQ(m.stability.verdict, Repeatability::Repeatable);
  // Just under a fifth of the budget: probed as before.
  FakeWorkload quicker(0.019);
  Measurement q = measure(quicker, ctx);
  EXPECT_EQ(q.warmup.sized_on, SizedOn::Probe);
  EXPECT_EQ(quicker.runs[1].samples, 3);
  before = quicker.runs.size();
  ASSERT_TRUE(confirm(quicker, ctx, q).ok);
  EXPECT_EQ(quicker.runs[before].samples, 2);
  // The previous size's time, when there is one, sizes it whatever the first op took.
  const MeasureHint hint{0.05, 1};
  FakeWorkload hinted(0.05);
  EXPECT_EQ(measure(hinted, ctx, &hint).warmup.sized_on, SizedOn::PreviousSize);
}

// A workload that is warm only once walked whole (a chase) walks its warm_steps right after the
// probe, before the warm-up judges steadiness, and again before its confirmation, which then has
// the point's own warm-up too; a walk past kWarmLapShare of the budget stops there, and the record
// says how far it got.
TEST(Harness, WarmStepsAreWalkedBeforeTheWarmupAndTheConfirmation) {
  RecordingGroup group;
  Context ctx(precision_options(0.005, 0.1), group, HostFacts{});
  Accounting a;
  a.steps_per_op = 16;
  a.min_sample_s = std::ldexp(1.0, -16);  // 16 ops of 2^-20 s a sample: 256 steps
  a.warm_steps = 25600;                   // 100 samples, 1.5 ms of the 0.025 s a walk may take
  FakeWorkload w(std::ldexp(1.0, -20), a);
  Measurement m = measure(w, ctx);
  ASSERT_GE(w.runs.size(), 4u);
  EXPECT_EQ(w.runs[2].samples, 100);  // after the first op and the probe: the whole walk
  EXPECT_EQ(w.runs[2].ops, 16);
  EXPECT_DOUBLE_EQ(m.warmup.lap, 1.0);
  std::size_t before = w.runs.size();
  ASSERT_TRUE(confirm(w, ctx, m).ok);
  // Walked again before the confirmation's batch, then warmed as the point was.
  EXPECT_EQ(w.runs[before].samples, 100 + m.warmup_samples);

  a.warm_steps = 25.6e6;  // 100,000 samples, 1.5 s: the budget's share holds 1638 of them
  FakeWorkload long_chain(std::ldexp(1.0, -20), a);
  m = measure(long_chain, ctx);
  EXPECT_EQ(long_chain.runs[2].samples, 1638);
  EXPECT_DOUBLE_EQ(m.warmup.lap, 0.01638);

  FakeWorkload none(std::ldexp(1.0, -20));  // asks for no walk: none, and the record leaves it out
  m = measure(none, ctx);
  EXPECT_LT(m.warmup.lap, 0);
}

// The runner's wire check runs between the probe and the warm-up, on the probe's estimate: a hook
// that says stop leaves the point unwarmed and untimed; one that says go changes nothing after it.
TEST(Harness, BeforeWarmupRunsAfterTheProbeAndCanEndThePoint) {
  RecordingGroup group;
  Context ctx(precision_options(0.005, 0.1), group, HostFacts{});
  FakeWorkload stopped(2e-6);
  int asked = 0;
  const Measurement m = measure(stopped, ctx, nullptr, [&](const Measurement& sized) {
    ++asked;
    EXPECT_EQ(stopped.runs.size(), 2u);  // the first op and the 3-op probe, nothing more yet
    EXPECT_DOUBLE_EQ(sized.seconds_per_op, 2e-6);
    EXPECT_GT(sized.ops_per_sample, 1);
    return false;
  });
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(stopped.runs.size(), 2u);
  EXPECT_EQ(m.sample_count, 0);
  EXPECT_FALSE(m.verification.ok);  // no data check ran: never a figure

  FakeWorkload plain(2e-6), asked_on(2e-6);
  const Measurement without = measure(plain, ctx);
  const Measurement with = measure(asked_on, ctx, nullptr, [](const Measurement&) { return true; });
  EXPECT_TRUE(with.verification.ok);
  EXPECT_EQ(with.sample_count, without.sample_count);
  EXPECT_EQ(with.ops_per_sample, without.ops_per_sample);
  EXPECT_EQ(with.warmup_samples, without.warmup_samples);
}

// A first op slowed by set-up (mappings, connections) looks like a slow op; once warm the op is
// 50x faster, and the warm-up is topped up to its tenth of the budget at the warm time.
TEST(Harness, WarmupSizedOnASlowFirstOpIsToppedUpOnceWarm) {
  RecordingGroup group;
  Context ctx(precision_options(0.005, 0.1), group, HostFacts{});
  FakeWorkload w(1e-3);
  w.slow_ops = 1;
  w.slow_seconds_per_op = 0.05;
  const Measurement m = measure(w, ctx);
  EXPECT_EQ(m.warmup.sized_on, SizedOn::FirstOp);
  EXPECT_EQ(m.warmup_samples, 10);  // 0.1 x 0.1 s at 1 ms, not the 2 the first op suggested
  EXPECT_EQ(m.warmup.samples_per_round, 10);
  EXPECT_EQ(w.runs[1].samples, 2);
  EXPECT_EQ(w.runs[2].samples, 8);  // the top-up
  EXPECT_DOUBLE_EQ(m.stats.median, 1e-3);
}

TEST(Harness, SampleCountCappedAtMaxSamples) {
  RecordingGroup group;
  RunOptions o = options_with_budget(10);
  o.max_samples = 1000;
  Context ctx(o, group, HostFacts{});
  FakeWorkload w(1e-5);
  const Measurement m = measure(w, ctx);
  EXPECT_EQ(m.sample_count, 1000);
  EXPECT_EQ(m.ops_per_sample, 1);
}

TEST(Harness, OneOpPerSampleIsHonoured) {
  RecordingGroup group;
  Context ctx(options_with_budget(0.001), group, HostFacts{});
  Accounting a;
  a.one_op_per_sample = true;
  FakeWorkload w(1e-8, a);
  const Measurement m = measure(w, ctx);
  EXPECT_EQ(m.ops_per_sample, 1);
  for (const auto& call : w.runs) EXPECT_EQ(call.ops, 1);
}

TEST(Harness, MaxOverRanksHookIsCalledWhenAsked) {
  RecordingGroup group;
  Context ctx(options_with_budget(0.001), group, HostFacts{});
  Accounting a;
  a.max_over_ranks = true;
  FakeWorkload w(1e-6, a);
  const Measurement m = measure(w, ctx);
  EXPECT_EQ(group.max_over_ranks_calls, 1);
  EXPECT_DOUBLE_EQ(m.stats.median, 2e-6);  // the reduced samples are the ones summarised
  ASSERT_TRUE(m.rank_mean_s.has_value());
  EXPECT_NEAR(*m.rank_mean_s, 1.5e-6, 1e-12);  // OSU's figure: the rank means, averaged

  RecordingGroup other;
  Context ctx2(options_with_budget(0.001), other, HostFacts{});
  FakeWorkload w2(1e-6);
  EXPECT_DOUBLE_EQ(measure(w2, ctx2).stats.median, 1e-6);
  EXPECT_EQ(other.max_over_ranks_calls, 0);
  EXPECT_FALSE(measure(w2, ctx2).rank_mean_s.has_value());
}

// A workload that reports the witnesses a clock or a transport can give.
class WitnessingWorkload final : public FakeWorkload {
 public:
  using FakeWorkload::FakeWorkload;
  std::optional<double> host_enqueue_s() const override { return 3e-6; }
  std::optional<double> copy_level_us() override {
    ++copy_level_calls;
    return 7.5;
  }
  int copy_level_calls = 0;
};

TEST(Harness, EnqueueTimeIsKeptForAClockThatTimesItsOwnLoop) {
  RecordingGroup group;
  Context ctx(options_with_budget(0.001), group, HostFacts{});
  Accounting a;
  a.one_op_per_sample = true;
  a.max_over_ranks = true;
  WitnessingWorkload w(1e-5, a);
  const Measurement m = measure(w, ctx);
  ASSERT_TRUE(m.host_enqueue_s.has_value());
  EXPECT_DOUBLE_EQ(*m.host_enqueue_s, 6e-6);  // the slowest rank's (RecordingGroup doubles)

  RecordingGroup other;
  Context batched(options_with_budget(0.001), other, HostFacts{});
  WitnessingWorkload v(1e-5);  // a batched clock enqueues before its window opens
  EXPECT_FALSE(measure(v, batched).host_enqueue_s.has_value());
}

TEST(Harness, CopyLevelIsTimedOnEveryRankOnlyWhenTheAccountingAsks) {
  RecordingGroup group;
  Context ctx(options_with_budget(0.001), group, HostFacts{});
  Accounting a;
  a.copy_level_witness = true;
  WitnessingWorkload w(1e-5, a);
  const Measurement m = measure(w, ctx);
  EXPECT_EQ(w.copy_level_calls, 2);  // right before the timed batches and right after them
  ASSERT_EQ(m.copy_level_us.size(), 2u);  // two entries per rank, reduced over ranks
  EXPECT_DOUBLE_EQ(m.copy_level_us[0], 15.0);
  EXPECT_DOUBLE_EQ(m.copy_level_us[1], 15.0);

  RecordingGroup other;
  Context plain(options_with_budget(0.001), other, HostFacts{});
  WitnessingWorkload v(1e-5);
  EXPECT_TRUE(measure(v, plain).copy_level_us.empty());
  EXPECT_EQ(v.copy_level_calls, 0);
}

TEST(Harness, FailedVerifyComesBackNotOk) {
  RecordingGroup group;
  Context ctx(options_with_budget(0.001), group, HostFacts{});
  FakeWorkload w(1e-6);
  w.verification = {false, 64, "byte 3 differs"};
  const Measurement m = measure(w, ctx);
  EXPECT_FALSE(m.verification.ok);
  EXPECT_NE(m.verification.detail.find("byte 3 differs"), std::string::npos);
}

// A benchmark whose copy never lands: the runner must write an error, never a bandwidth.
class NeverCopies final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    BenchmarkInfo i{"test.never_copies", Category::ExplicitCopy, "test", "", Metric::Bandwidth,
                    RankRange{1, 1}, {4096}, {4096}};
    return i;
  }
  Movement movement(const Context&, const Params&) const override {
    return movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::CpuMemcpy,
                            host_memory(0, Allocator::Pageable), host_memory(0, Allocator::Pageable));
  }
  std::unique_ptr<Workload> prepare(Context&, const Params&, std::uint64_t) const override {
    Accounting a;
    a.bytes_per_op = 4096;
    auto w = std::make_unique<FakeWorkload>(1e-6, a);
    w->verification = {false, 4096, "destination byte 0 of 4096 differs"};
    return w;
  }
};

TEST(Runner, FailedDataCheckBecomesErrorRecordWithoutBandwidth) {
  char path[] = "/tmp/commatlas-runner-test-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  SingleProcessGroup group;
  Context ctx(options_with_budget(0.001), group, HostFacts{});
  NeverCopies benchmark;
  RunSummary summary;
  {
    RecordFile out(path);
    summary = run_benchmarks({&benchmark}, ctx, &out, ProgressMode::None);
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path);
  const std::string record = text.str();
  EXPECT_EQ(summary.errors, 1);
  EXPECT_EQ(summary.results, 0);
  EXPECT_NE(record.find("\"type\":\"error\""), std::string::npos) << record;
  EXPECT_NE(record.find("data check failed"), std::string::npos) << record;
  EXPECT_NE(record.find("destination byte 0"), std::string::npos) << record;
  EXPECT_EQ(record.find("bandwidth_gbps"), std::string::npos) << record;
  EXPECT_EQ(std::count(record.begin(), record.end(), '\n'), 1);
}

// A point whose check failed timed a loop that may have moved nothing (nanoseconds per op): its
// time must not size the next point, whose untimed warm-up does move bytes.
class FailsFirstSize final : public Benchmark {
 public:
  struct Logged final : FakeWorkload {
    Logged(double t, Accounting a, std::vector<std::vector<Call>>* log) : FakeWorkload(t, a), log_(log) {}
    ~Logged() override { log_->push_back(runs); }
    std::vector<std::vector<Call>>* log_;
  };
  BenchmarkInfo info() const override {
    return BenchmarkInfo{"test.fails_first_size", Category::ExplicitCopy, "test", "",
                         Metric::Bandwidth, RankRange{1, 1}, {8192, 4096}, {4096}};
  }
  Movement movement(const Context&, const Params&) const override {
    return movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::CpuMemcpy,
                            host_memory(0, Allocator::Pageable), host_memory(0, Allocator::Pageable));
  }
  std::unique_ptr<Workload> prepare(Context&, const Params&, std::uint64_t bytes) const override {
    Accounting a;
    a.bytes_per_op = static_cast<double>(bytes);
    const bool first = bytes == 8192;
    auto w = std::make_unique<Logged>(first ? 1e-9 : 1e-5, a, &calls);
    if (first) w->verification = {false, bytes, "destination byte 0 differs"};
    return w;
  }
  mutable std::vector<std::vector<FakeWorkload::Call>> calls;
};

TEST(Runner, AFailedPointDoesNotSizeTheNext) {
  char path[] = "/tmp/commatlas-runner-test-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  SingleProcessGroup group;
  RunOptions o = precision_options(0.005, 0.001);
  Context ctx(o, group, HostFacts{});
  FailsFirstSize benchmark;
  {
    RecordFile out(path);
    run_benchmarks({&benchmark}, ctx, &out, ProgressMode::None);
  }
  std::remove(path);
  ASSERT_EQ(benchmark.calls.size(), 2u);
  const auto& second = benchmark.calls[1];
  ASSERT_GE(second.size(), 2u);
  // Its own probe: one op, then three single ops to time it (with a hint the probe is the only one).
  EXPECT_EQ(second[1].samples, 3);
  EXPECT_EQ(second[1].ops, 1);
  // And the warm-up sized on its own 10 us, not the failed point's 1 ns.
  EXPECT_LE(second[2].ops, 10);
}

// A variant its tier rules cap (as mpi.gpu_aware.* on managed memory: sizes above 1 MiB are
// --full): the default run measures it up to the cap; --full and sizes the user names, all of them.
class CappedVariant final : public Benchmark {
 public:
  BenchmarkInfo info() const override {
    return BenchmarkInfo{"mpi.gpu_aware.capped_for_test", Category::PointToPoint, "test", "",
                         Metric::Bandwidth, RankRange{1, 0}, {16ull << 20, 1ull << 20}, {1ull << 20},
                         {{{{"allocator", "managed"}}, "capped for the test", 1ull << 20}}};
  }
  std::vector<Params> variants(const Context&) const override {
    return {Params{{"allocator", std::string("managed")}}, Params{{"allocator", std::string("device")}}};
  }
  Movement movement(const Context&, const Params&) const override {
    return movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::CpuMemcpy,
                            host_memory(0, Allocator::Pageable), host_memory(0, Allocator::Pageable));
  }
  std::unique_ptr<Workload> prepare(Context&, const Params& p, std::uint64_t bytes) const override {
    measured.emplace_back(p.text("allocator"), bytes);
    Accounting a;
    a.bytes_per_op = static_cast<double>(bytes);
    return std::make_unique<FakeWorkload>(1e-6, a);
  }
  mutable std::vector<std::pair<std::string, std::uint64_t>> measured;
};

std::vector<std::pair<std::string, std::uint64_t>> capped_points(RunOptions o) {
  SingleProcessGroup group;
  Context ctx(o, group, HostFacts{});
  CappedVariant benchmark;
  run_benchmarks({&benchmark}, ctx, nullptr, ProgressMode::None);
  return benchmark.measured;
}

TEST(Runner, SizesAboveATierCapAreForFullOnly) {
  using Points = std::vector<std::pair<std::string, std::uint64_t>>;
  RunOptions o = options_with_budget(0.001);
  EXPECT_EQ(capped_points(o), (Points{{"managed", 1ull << 20}, {"device", 16ull << 20}, {"device", 1ull << 20}}));
  o.full = true;
  EXPECT_EQ(capped_points(o).size(), 4u);
  o.full = false;
  o.sizes = {16ull << 20};
  EXPECT_EQ(capped_points(o), (Points{{"managed", 16ull << 20}, {"device", 16ull << 20}}));
}

TEST(Runner, ReferenceLoopsRunRightAfterWhatTheyCheck) {
  const Benchmark* reference = Registry::instance().find("reference.host_memcpy");
  const Benchmark* memcpy = Registry::instance().find("host.memcpy");
  const Benchmark* chase = Registry::instance().find("host.pointer_chase");
  ASSERT_TRUE(reference && memcpy && chase);
  SingleProcessGroup group;
  const Context ctx(RunOptions{}, group, HostFacts{});
  using List = std::vector<const Benchmark*>;
  EXPECT_EQ(references_after_partners({memcpy, chase, reference}, ctx), (List{memcpy, reference, chase}));
  EXPECT_EQ(references_after_partners({reference, chase, memcpy}, ctx), (List{chase, memcpy, reference}));
  // Without its partner a reference keeps its place.
  EXPECT_EQ(references_after_partners({reference, chase}, ctx), (List{reference, chase}));
}

}  // namespace
}  // namespace commatlas

namespace commatlas {
namespace {

// The first exchange over a path can be far slower than the rest (connections, registrations):
// warm-up rounds go on until two halves agree, and the record says so.
TEST(Warmup, GoesOnUntilSteadyAndSaysSo) {
  RecordingGroup group;
  Context ctx(options_with_budget(0.01), group, HostFacts{});
  FakeWorkload steady(1e-5);
  const Measurement a = measure(steady, ctx);
  EXPECT_EQ(a.warmup.rounds, 1);
  EXPECT_TRUE(a.warmup.steady);
  FakeWorkload settling(1e-5);
  // The probe's 4 calls and the first 7 of the 10 samples of the warm-up's chunk are 10x slower:
  // the chunk's median is the slow time, so 3 samples top it up to the tenth; the first round's
  // halves (6 slow, then 1 slow and 6 fast) disagree, and a second round agrees with its later half.
  settling.slow_ops = 11;
  settling.slow_seconds_per_op = 1e-4;
  const Measurement b = measure(settling, ctx);
  EXPECT_EQ(b.warmup.rounds, 2);
  EXPECT_TRUE(b.warmup.steady);
  EXPECT_DOUBLE_EQ(b.stats.median, 1e-5);  // timed only once steady
  EXPECT_DOUBLE_EQ(b.warmup.first_op_s, 1e-4);
}

Measurement measured_with(double median, double p5, double p95, std::int64_t samples) {
  Measurement m;
  m.stats.median = median;
  m.stats.p5 = p5;
  m.stats.p95 = p95;
  m.sample_count = samples;
  return m;
}

TEST(Stability, TwoStatesAreUnstableOneStateRepeats) {
  const Measurement tight = measured_with(1e-3, 0.99e-3, 1.01e-3, 100);
  EXPECT_EQ(judge_stability(tight, 1.03e-3, 8).verdict, Repeatability::Repeatable);
  EXPECT_EQ(judge_stability(tight, 0.5e-3, 8).verdict, Repeatability::Unstable);  // 0.35 vs 154 GB/s kind
  EXPECT_EQ(judge_stability(tight, 1.2e-3, 8).verdict, Repeatability::Unstable);
  EXPECT_DOUBLE_EQ(judge_stability(tight, 1.2e-3, 8).tolerance, kRepeatTolerance);
  // A wide distribution's median scatters more: 20% apart is within what 8 samples allow there.
  const Measurement wide = measured_with(1e-3, 0.2e-3, 3e-3, 100);
  const Stability st = judge_stability(wide, 1.2e-3, 8);
  EXPECT_EQ(st.verdict, Repeatability::Repeatable);
  EXPECT_GT(st.tolerance, 0.2);
}

// A benchmark of three sizes in one set of buffers: every point gets a confirmation batch after
// the sweep, and its record says whether the two agreed.
class ThreeSizes final : public Benchmark {
 public:
  struct Resizable final : FakeWorkload {
    using FakeWorkload::FakeWorkload;
    bool resize(std::uint64_t) override { return true; }
  };
  BenchmarkInfo info() const override {
    return BenchmarkInfo{"test.three_sizes", Category::ExplicitCopy, "test", "",
                         Metric::Bandwidth, RankRange{1, 1}, {4096, 8192, 16384}, {4096}};
  }
  Movement movement(const Context&, const Params&) const override {
    return movement_between(Operation::Copy, MoveDirection::Uni, Mechanism::CpuMemcpy,
                            host_memory(0, Allocator::Pageable), host_memory(0, Allocator::Pageable));
  }
  std::unique_ptr<Workload> prepare(Context&, const Params&, std::uint64_t bytes) const override {
    Accounting a;
    a.bytes_per_op = static_cast<double>(bytes);
    ++prepares;
    if (!resizable) return std::make_unique<FakeWorkload>(1e-5, a);
    return std::make_unique<Resizable>(1e-5, a);
  }
  bool resizable = true;
  mutable int prepares = 0;
};

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string run_to_text(const Benchmark& b, Context& ctx, RunSummary* summary) {
  char path[] = "/tmp/commatlas-runner-test-XXXXXX";
  const int fd = mkstemp(path);
  close(fd);
  {
    RecordFile out(path);
    *summary = run_benchmarks({&b}, ctx, &out, ProgressMode::None);
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path);
  return text.str();
}

TEST(Runner, ConfirmationPassJudgesEveryPoint) {
  SingleProcessGroup group;
  Context ctx(options_with_budget(0.001), group, HostFacts{});
  ThreeSizes b;
  RunSummary summary;
  const std::string text = run_to_text(b, ctx, &summary);
  EXPECT_EQ(summary.results, 3);
  EXPECT_EQ(b.prepares, 1);  // one set of buffers, the confirmation included
  std::size_t repeatable = 0;
  for (std::size_t at = text.find("\"verdict\":\"repeatable\""); at != std::string::npos;
       at = text.find("\"verdict\":\"repeatable\"", at + 1))
    ++repeatable;
  EXPECT_EQ(repeatable, 3u) << text;
  EXPECT_NE(text.find("\"passes_median_s\""), std::string::npos);
  EXPECT_NE(text.find("\"warmup\":{\"first_op_s\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"sized_on\":\"probe\""), std::string::npos) << text;  // the largest size
  EXPECT_NE(text.find("\"sized_on\":\"previous_size\""), std::string::npos) << text;

  ThreeSizes fresh;  // prepares afresh at every size: each size's buffers wait for its confirmation
  fresh.resizable = false;
  const std::string confirmed = run_to_text(fresh, ctx, &summary);
  EXPECT_EQ(summary.results, 3);
  EXPECT_EQ(fresh.prepares, 3);  // once per size, none again for the confirmation
  EXPECT_EQ(count_of(confirmed, "\"verdict\":\"repeatable\""), 3u) << confirmed;
  EXPECT_EQ(confirmed.find("\"verdict\":\"unchecked\""), std::string::npos) << confirmed;
}

// Past kFreshHoldBytes of held sizes, a fresh variant lets a size's buffers go, and that point says
// why it is unchecked; the sizes that fit, and the last one measured, are still confirmed.
TEST(Runner, FreshVariantPastTheHoldLimitSaysWhichSizesWentUnchecked) {
  SingleProcessGroup group;
  RunOptions options = options_with_budget(0.001);
  options.sizes = {kFreshHoldBytes, kFreshHoldBytes / 2, 4096};  // 1 GiB kept; 512 MiB more is past it
  Context ctx(options, group, HostFacts{});
  ThreeSizes fresh;
  fresh.resizable = false;
  RunSummary summary;
  const std::string text = run_to_text(fresh, ctx, &summary);
  EXPECT_EQ(summary.results, 3);
  EXPECT_EQ(count_of(text, "\"verdict\":\"repeatable\""), 2u) << text;
  EXPECT_EQ(count_of(text, "\"verdict\":\"unchecked\""), 1u) << text;
  const std::size_t let_go = text.find("this size's buffers were let go: its sizes would have held more than 1 GiB");
  ASSERT_NE(let_go, std::string::npos) << text;
  const std::size_t line = text.rfind('\n', let_go) + 1;
  EXPECT_NE(text.substr(line, let_go - line).find("\"bytes\":536870912"), std::string::npos) << text;
}

}  // namespace
}  // namespace commatlas
