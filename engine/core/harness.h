// The one timing harness every benchmark goes through.
//
// measure() decides how many operations make a sample and how many samples fill the time budget,
// warms up, runs the timed loop, reduces over ranks where the benchmark asks for it, and checks
// the data afterwards. The clock-specific loops a Workload::run uses live here too, so that how a
// sample is timed is written once per clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <optional>
#include <vector>

#include "core/benchmark.h"
#include "core/context.h"
#include "core/host_activity.h"
#include "core/stats.h"

namespace commatlas {

// Why a point stopped sampling (the record's timing.stop_reason).
enum class StopReason {
  Precision,   // the median's 95% interval is within the target
  Budget,      // the time budget ran out first: the target was not reached
  MaxSamples,  // RunOptions::max_samples ran out first
  Fixed,       // --precision off: one batch filling the budget
};
std::string to_string(StopReason r);

// Where a point's wall time went, measured by steady_clock around each phase (seconds).
struct PointCost {
  double wall_s = 0;         // the whole point, as the runner saw it (prepare/resize to record)
  double prepare_s = 0;      // allocation and fill (prepare) or resize into the variant's buffers
  double calibration_s = 0;  // first op and the probe that sizes a sample
  double warmup_s = 0;       // warm-up samples (including a re-sized warm-up)
  double timed_s = 0;        // the timed batches, as wall time around the workload's runs
  double check_s = 0;        // the data check
  double confirm_s = 0;      // the confirmation batch (runner's pass after the sweep), checked too
};

// Whether the warm-up reached steady state before timing began: warm-up rounds go on until two
// successive halves agree within kSteadyDrift, at most kMaxWarmupRounds rounds. The first
// exchange over a mechanism and pair pays for connections, registrations and mappings; a point
// timed before those settle reads the set-up, not the transfer.
// What sized the point's first batch and warm-up: a 3-op probe after the first op, the previous
// size of the same variant (scaled up by the bytes), or a first op that alone took kSlowOpShare of
// the budget (the probe would only have added ops to a point that gets min_samples anyway).
enum class SizedOn { Probe, PreviousSize, FirstOp };
std::string to_string(SizedOn s);
inline constexpr double kSlowOpShare = 0.2;

struct Warmup {
  double first_op_s = 0;  // the very first operation (set-up included), rank 0's clock
  SizedOn sized_on = SizedOn::Probe;
  int rounds = 0;         // warm-up rounds run (each `samples_per_round` samples)
  std::int64_t samples_per_round = 0;
  bool steady = false;    // the last two halves agreed within kSteadyDrift
  double drift = 0;       // |later / earlier - 1| of the last two halves' medians
  // Accounting::warm_steps: the share of them walked before the warm-up (1: all; less where
  // kWarmLapShare of the budget ran out first); negative where the workload asks for none.
  double lap = -1;
};
// The most of a point's time budget that walking Accounting::warm_steps may take, before the
// warm-up and again before the confirmation: a chain that a cache holds is walked in a few
// milliseconds (a 16 MiB one in 4-25 ms on the host), and one that takes longer misses anyway,
// where this much (150K loads of a 256 MiB host chain) caches its page-table entries again.
inline constexpr double kWarmLapShare = 0.25;
inline constexpr double kSteadyDrift = 0.25;
inline constexpr int kMaxWarmupRounds = 4;
// The warm-up's first chunk (what a sample costs in wall time is learnt from it), the samples a
// re-sized batch gets at its own size whatever the time, and the most a warm-up round runs.
inline constexpr std::int64_t kWarmupChunk = 16;
inline constexpr std::int64_t kMinWarmSamples = 8;
inline constexpr std::int64_t kMaxWarmupSamples = 1000;

// Whether the figure repeats: after the variant's whole sweep, each point is measured again in a
// short batch (the runner's confirmation pass), separated in time from the first by every other
// size of the sweep. A point whose two medians disagree beyond the tolerance is unstable: the
// machine sat in different states, and one median with a tight interval would hide that.
struct Measurement;
enum class Repeatability { Repeatable, Unstable, Unchecked };
std::string to_string(Repeatability r);
struct Stability {
  Repeatability verdict = Repeatability::Unchecked;
  std::string why;                  // Unchecked: why no confirmation ran
  double first_median_s = 0;        // the point's own median (per op, as recorded)
  double confirm_median_s = 0;      // the confirmation batch's median
  std::int64_t confirm_samples = 0;
  double tolerance = 0;             // relative: beyond it the two medians disagree
  double separation_s = 0;          // from the end of the first measurement to the confirmation
  // What the host did during the confirmation batch (the first pass's is Measurement::activity):
  // where the two passes disagree, the machine's witness of why.
  std::optional<HostActivity> activity;
};
// Medians within max(kRepeatTolerance, the spread the two batches' own sample counts allow) agree.
inline constexpr double kRepeatTolerance = 0.10;
// A median of 5 samples tells a 10% move from noise on most points, and two states apart on all;
// the pass costs at most 15% of a point's budget (8 samples and 25% cost the 2x H100 default run
// 10.8 of its 84 s).
inline constexpr std::int64_t kConfirmSamples = 5;
inline constexpr double kConfirmBudgetShare = 0.15;
// A variant that prepares fresh memory per size keeps each size's buffers for its confirmation
// (core/runner.cpp), at most this many bytes of sizes at once: every default size of every such
// variant fits (the largest, a 256 MiB chase or managed copy, holds 273 MiB of sizes).
inline constexpr std::uint64_t kFreshHoldBytes = std::uint64_t{1} << 30;
Stability judge_stability(const Measurement& first, double confirm_median_s, std::int64_t confirm_samples);

// What the previous size of the same variant measured: calibration starts from it.
struct MeasureHint {
  double seconds_per_op = 0;  // raw per-operation time (before steps_per_op)
  double bytes = 0;           // that size
};

struct Measurement {
  Accounting accounting;
  Stats stats;                  // over every sample
  std::vector<double> samples;  // bounded reservoir of per-operation seconds, in arrival order
  // Soak only: every sample (in `samples`) and when each began, in seconds from the soak's start.
  std::vector<double> sample_starts;
  double soak_s = 0;           // the soak's planned length (0: not a soak)
  bool soak_capped = false;    // stopped at kMaxSoakSamples before the time was up
  std::int64_t sample_count = 0;
  std::int64_t ops_per_sample = 1;
  std::int64_t warmup_samples = 0;
  Warmup warmup;
  Stability stability;          // set by the runner's confirmation pass
  std::optional<HostActivity> activity;  // what the host did while the timed batches ran
  std::chrono::steady_clock::time_point finished_at;  // end of the timed batches
  // Benchmarks reduced over ranks (accounting.max_over_ranks): the mean over ranks of each rank's
  // mean per-op time, the OSU micro-benchmarks' collective figure, kept beside the max.
  std::optional<double> rank_mean_s;
  // Workload::host_enqueue_s of the timed batches, the slowest rank's where the figure is the
  // slowest rank's; absent for clocks that enqueue before their window opens.
  std::optional<double> host_enqueue_s;
  // Accounting::copy_level_witness: each rank's copy level (microseconds) right before and right
  // after the timed batches, two entries per rank in rank order, 0 where a rank has none; empty
  // for every other workload.
  std::vector<double> copy_level_us;
  Verification verification;
  // Precision-driven stopping (RunOptions::precision): the target (0 when off), the relative
  // half-width of the median's 95% interval reached (infinity when too few samples had one),
  // why sampling stopped, and in how many timed batches (the workload ran once per batch).
  double precision_target = 0;
  double precision_reached = 0;
  StopReason stop_reason = StopReason::Fixed;
  int batches = 0;
  double seconds_per_op = 0;  // median raw per-operation time, the next size's hint
  PointCost cost;
  // False for measurements taken outside the engine and written through it (core/ingest.h): their
  // records carry no precision, warm-up or cost fields, which only this harness can fill.
  bool harnessed = true;
};

// Asked by measure() once the first op and the probe have sized a sample, before the warm-up, on
// every rank: `sized` holds that estimate in seconds_per_op and ops_per_sample. The runner's wire
// check runs its pass here (core/wire.h), so a variant whose bytes take another route is not
// warmed up and timed in full first (managed GPU-aware MPI, which crosses PCIe, spent about 0.5 s
// of a 2x H100 `--quick` run that way, now 0.15 s). False ends the point there: the measurement
// returned has no samples and no passed data check, so it can never become a figure.
using BeforeWarmup = std::function<bool(const Measurement& sized)>;

// A soak keeps every sample: this bounds the record (two numbers per sample).
inline constexpr std::int64_t kMaxSoakSamples = 500000;

// Runs the workload under the context's budget. A failed data check is returned in
// `verification` (the caller records it as an error, never as a number). After warm-up it samples
// in growing batches (the total doubles each time, one Workload::run per batch) until the median's
// 95% interval is within RunOptions::precision, the budget of timed time is spent, or max_samples;
// with precision 0, one batch fills the budget. `hint` (the previous size of the same variant)
// skips the probe that sizes a sample; `before_warmup`, where given, runs between the two.
Measurement measure(Workload& workload, Context& ctx, const MeasureHint* hint = nullptr,
                    const BeforeWarmup& before_warmup = nullptr);

// The confirmation batch of a point measured earlier by measure(), in the same workload (resized
// back to the point's size): a short re-warm, then up to kConfirmSamples samples of the first
// measurement's batch size, poisoned before and checked after like any timed batch. Fills
// `first.stability` (or leaves it Unchecked with the reason) and returns the data check.
Verification confirm(Workload& workload, Context& ctx, Measurement& first);

// Host clock loop: each sample times `ops` back-to-back calls of op() with steady_clock and
// records the per-call time. Inline so the op is inlined into the loop and the harness adds
// only two clock reads per sample.
template <typename Op>
inline void time_host_samples(std::int64_t samples, std::int64_t ops, std::vector<double>& seconds, Op&& op) {
  using Clock = std::chrono::steady_clock;
  seconds.reserve(seconds.size() + static_cast<std::size_t>(samples));
  for (std::int64_t s = 0; s < samples; ++s) {
    const auto t0 = Clock::now();
    for (std::int64_t k = 0; k < ops; ++k) op();
    const auto t1 = Clock::now();
    seconds.push_back(std::chrono::duration<double>(t1 - t0).count() / static_cast<double>(ops));
  }
}

// Bandwidth in GB/s (1e9 B/s) of `bytes` moved in `seconds`.
inline double gbps(double bytes, double seconds) { return seconds > 0 ? bytes / seconds / 1e9 : 0.0; }

}  // namespace commatlas
