#include "core/harness.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/placement.h"

namespace commatlas {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

template <typename F>
double timed_apart(F&& f) {
  const auto t0 = Clock::now();
  f();
  return since(t0);
}

std::int64_t clamp64(double v, std::int64_t lo, std::int64_t hi) {
  if (!(v == v)) return lo;  // NaN
  if (v < static_cast<double>(lo)) return lo;
  if (v > static_cast<double>(hi)) return hi;
  return static_cast<std::int64_t>(v);
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return percentile_sorted(v, 50);
}

// The first timed batch when stopping on precision: enough samples for a 95% interval of the
// median to exist (6) with room to spare, fewer when the budget cannot hold them.
constexpr std::int64_t kFirstBatchSamples = 16;

// The soak loop: samples one at a time (their start times are the time series), for soak_s seconds
// of rank 0's clock. Every `check_every` samples rank 0 says whether to go on, so all ranks run the
// same samples and a collective never waits for a rank that stopped early.
void soak(Workload& workload, Group& group, double soak_s, std::int64_t ops, double t_sample, std::vector<double>& seconds,
          std::vector<double>& starts, bool& capped) {
  using Clock = std::chrono::steady_clock;
  const std::int64_t check_every = group.broadcast(clamp64(0.05 / t_sample, 1, 10000));
  group.barrier();
  const auto t0 = Clock::now();
  for (;;) {
    for (std::int64_t k = 0; k < check_every; ++k) {
      starts.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      workload.run(1, ops, seconds);
    }
    const bool more = std::chrono::duration<double>(Clock::now() - t0).count() < soak_s;
    const bool under_cap = static_cast<std::int64_t>(seconds.size()) + check_every <= kMaxSoakSamples;
    if (!group.broadcast(more && under_cap ? 1 : 0)) {
      capped = more && !under_cap;
      return;
    }
  }
}

// Steps one sample of `ops` operations walks.
double steps_per_sample(const Accounting& a, std::int64_t ops) {
  return static_cast<double>(ops) * std::max(a.steps_per_op, 1.0);
}

// Samples of `ops` operations that walk Accounting::warm_steps once, no more than kWarmLapShare of
// `budget_s` at `t_op` seconds an operation, at least one.
std::int64_t lap_samples(const Accounting& a, std::int64_t ops, double t_op, double budget_s) {
  const double whole = std::ceil(a.warm_steps / steps_per_sample(a, ops));
  const double affordable = std::floor(kWarmLapShare * budget_s / (std::max(t_op, 1e-9) * static_cast<double>(ops)));
  return clamp64(std::min(whole, affordable), 1, std::numeric_limits<std::int32_t>::max());  // the budget bounds it
}

}  // namespace

std::string to_string(Repeatability r) {
  switch (r) {
    case Repeatability::Repeatable: return "repeatable";
    case Repeatability::Unstable: return "unstable";
    case Repeatability::Unchecked: return "unchecked";
  }
  return "unchecked";
}

Stability judge_stability(const Measurement& first, double confirm_median_s, std::int64_t confirm_samples) {
  Stability st;
  st.first_median_s = first.stats.median;
  st.confirm_median_s = confirm_median_s;
  st.confirm_samples = confirm_samples;
  // The median of n samples scatters by about 1.25 sigma / sqrt(n); sigma from the first batches'
  // p5..p95 range, about 3.3 sigma wide for a normal spread. Two medians further apart than 3 such
  // scatters (or kRepeatTolerance, whichever is larger) come from different states.
  const double sigma = std::max(first.stats.p95 - first.stats.p5, 0.0) / 3.29;
  const double n1 = static_cast<double>(std::max<std::int64_t>(first.sample_count, 1));
  const double n2 = static_cast<double>(std::max<std::int64_t>(confirm_samples, 1));
  const double scatter = 1.25 * sigma * std::sqrt(1 / n1 + 1 / n2);
  const double base = std::max(first.stats.median, 1e-15);
  st.tolerance = std::max(kRepeatTolerance, 3 * scatter / base);
  st.verdict = std::fabs(confirm_median_s / base - 1) <= st.tolerance ? Repeatability::Repeatable : Repeatability::Unstable;
  return st;
}

std::string to_string(SizedOn s) {
  switch (s) {
    case SizedOn::Probe: return "probe";
    case SizedOn::PreviousSize: return "previous_size";
    case SizedOn::FirstOp: return "first_op";
  }
  return "probe";
}

std::string to_string(StopReason r) {
  switch (r) {
    case StopReason::Precision: return "precision";
    case StopReason::Budget: return "budget";
    case StopReason::MaxSamples: return "max_samples";
    case StopReason::Fixed: return "fixed";
  }
  return "fixed";
}

Measurement measure(Workload& workload, Context& ctx, const MeasureHint* hint, const BeforeWarmup& before_warmup) {
  const RunOptions& opt = ctx.options;
  Group& group = ctx.group;
  Measurement m;
  m.accounting = workload.accounting();
  const Accounting& a = m.accounting;

  // First op: pays for first touch, lazy module loads, connection setup. Never kept. With the
  // previous size's time known, it is the whole probe: that time, scaled up by the size ratio
  // (sizes run largest first, so the estimate is high; an op never gets faster with more bytes, and a
  // size larger than the hint's is scaled up), sizes the first warm-up; the
  // warm-up re-sizes the batch anyway.
  auto t0 = Clock::now();
  std::vector<double> probe;
  workload.run(1, 1, probe);
  m.warmup.first_op_s = probe.empty() ? 0 : probe.front();
  double t_op_estimate = 0;
  // Rank 0 decides whether the probe runs: a rank that skipped it alone would be 3 operations
  // short, and in a ping-pong its partner's extra messages would arrive at the next point (an
  // MPI_ERR_TRUNCATE once sizes descend, seen on H100 with 2 ranks).
  const bool use_hint = group.broadcast(hint && hint->seconds_per_op > 0 ? 1 : 0) != 0;
  // A first op that alone takes a slow-op share of the budget sizes the batch by itself: the point
  // gets one op per sample and min_samples samples whatever the probe would say, and the warm-up
  // below re-sizes on the warm time anyway. The probe's 3 ops were 3 of 16 ops of such a point (a
  // 16 MiB host MPI bibw op is 0.29 s on 2x H100). Rank 0's first op decides for every rank.
  const bool slow_first_op =
      !use_hint && group.broadcast(m.warmup.first_op_s >= kSlowOpShare * opt.time_budget_s ? 1 : 0) != 0;
  if (use_hint) {
    // Counts are rank 0's (broadcast below), so another rank's estimate only has to exist.
    const double ratio = hint && hint->bytes > 0 && a.bytes_per_op > hint->bytes ? a.bytes_per_op / hint->bytes : 1.0;
    t_op_estimate = hint ? hint->seconds_per_op * ratio : 0;
    m.warmup.sized_on = SizedOn::PreviousSize;
  } else if (slow_first_op) {
    t_op_estimate = m.warmup.first_op_s;
    m.warmup.sized_on = SizedOn::FirstOp;
  } else {
    probe.clear();
    workload.run(3, 1, probe);
    t_op_estimate = median_of(probe);
    m.warmup.sized_on = SizedOn::Probe;
  }
  t_op_estimate = std::max(t_op_estimate, 1e-9);

  // Rank 0 decides every count so that all ranks run the same number of operations.
  std::int64_t ops = 1;
  const double min_sample_s = std::max(opt.min_sample_s, a.min_sample_s);
  if (!a.one_op_per_sample) ops = clamp64(std::ceil(min_sample_s / t_op_estimate), 1, opt.max_ops_per_sample);
  ops = group.broadcast(ops);
  m.cost.calibration_s = since(t0);
  if (before_warmup) {
    m.seconds_per_op = t_op_estimate;
    m.ops_per_sample = ops;
    // Every rank asks, and every rank must get the same answer (the wire check broadcasts its verdict).
    if (!before_warmup(m)) return m;
  }

  // Warm-up: a tenth of the budget at the batch size the timed samples will have, spent as the
  // timed batches spend theirs: the larger of the samples' own time and the wall time they took.
  // Counted on the ops' time alone, a sample's fixed cost (a blocked-start kernel, events, a
  // synchronize: about 100 us on H100) was left out, and a 4 KiB SM copy's warm-up of 200 samples
  // of 50 us took 0.04 s, not 0.01; over a default run, about 6 of its 15 s of warm-up.
  // So a first chunk of at most kWarmupChunk samples shows what a sample costs, the batch is sized
  // again on its warm time, and the rest is topped up to the tenth at that cost.
  t0 = Clock::now();
  // A workload that is warm only once all of it has been walked (Accounting::warm_steps) walks
  // that first, untimed, so that the warm-up below judges steadiness on a warm workload. Sized on
  // the probe's time, whose loads were cold, so the share of the budget is not overrun.
  if (a.warm_steps > 0) {
    const std::int64_t walk = group.broadcast(lap_samples(a, ops, t_op_estimate, opt.time_budget_s));
    std::vector<double> walked;
    workload.run(walk, ops, walked);
    m.warmup.lap = std::min(1.0, static_cast<double>(walk) * steps_per_sample(a, ops) / a.warm_steps);
  }
  const double warm_target_s = 0.1 * opt.time_budget_s;
  std::int64_t planned = clamp64(warm_target_s / (t_op_estimate * static_cast<double>(ops)), 2, kMaxWarmupSamples);
  planned = group.broadcast(planned);
  const std::int64_t chunk = std::min(planned, kWarmupChunk);
  std::vector<double> warm;
  workload.run(chunk, ops, warm);
  const double chunk_wall = since(t0);
  const double t_warm = std::max(median_of(warm), 1e-9);
  double spent = std::max(chunk_wall, std::accumulate(warm.begin(), warm.end(), 0.0) * static_cast<double>(ops));
  double sample_cost = std::max(chunk_wall / static_cast<double>(chunk), t_warm * static_cast<double>(ops));
  std::int64_t warmup = chunk;  // samples at the final batch size so far
  // The first calls can be much slower than the rest (NCCL sets up its channels there, clocks ramp
  // up), so a batch sized on them is too short once warm: on 2x H200, 8-byte NCCL calls probed at
  // over 50 us ran at 8.6 us, one per event pair. Size the batch again on the warm time; the
  // samples so far were at the old size and do not count towards the steady-state check.
  if (!a.one_op_per_sample) {
    std::int64_t warm_ops = clamp64(std::ceil(min_sample_s / t_warm), 1, opt.max_ops_per_sample);
    warm_ops = group.broadcast(warm_ops);
    if (warm_ops > ops) {
      sample_cost += t_warm * static_cast<double>(warm_ops - ops);  // the fixed cost stays, the ops grow
      ops = warm_ops;
      warm.clear();
      warmup = 0;
    }
  }
  // Top up to the tenth (a first op slowed by set-up, or a larger size's time, sized the plan
  // short; a re-sized batch needs samples of its own), and at least kMinWarmSamples at the final size.
  {
    const double left = warm_target_s - spent;
    // Whole samples that fit what is left (truncated, as `planned` is: a ceiling would add one for a
    // rounding error).
    std::int64_t more = left > 0 ? static_cast<std::int64_t>(left / sample_cost) : 0;
    more = std::max(more, std::min(planned, kMinWarmSamples) - warmup);
    more = group.broadcast(std::clamp<std::int64_t>(more, 0, kMaxWarmupSamples - warmup));
    if (more > 0) workload.run(more, ops, warm);
    warmup += more;
  }
  // Steady state before timing: the later half of the warm-up must agree with the earlier one, or
  // another round runs (rank 0 decides for every rank). Each round is compared with the one before.
  m.warmup.samples_per_round = warmup;
  m.warmup.rounds = 1;
  {
    const std::size_t half = warm.size() / 2;
    double earlier = median_of(std::vector<double>(warm.begin(), warm.begin() + static_cast<std::ptrdiff_t>(half)));
    double later = median_of(std::vector<double>(warm.begin() + static_cast<std::ptrdiff_t>(half), warm.end()));
    for (;;) {
      const double drift = earlier > 0 ? std::fabs(later / earlier - 1) : 0;
      const bool steady = group.broadcast(drift <= kSteadyDrift ? 1 : 0) != 0;
      m.warmup.drift = drift;
      m.warmup.steady = steady;
      if (steady || m.warmup.rounds >= kMaxWarmupRounds) break;
      warm.clear();
      workload.run(warmup, ops, warm);
      ++m.warmup.rounds;
      earlier = later;
      later = median_of(warm);
    }
  }
  m.cost.warmup_s = since(t0);
  const double t_sample = std::max(median_of(warm), 1e-9) * static_cast<double>(ops);
  // Samples of this size that the budget holds (at least min_samples: a slow op still gets those).
  const std::int64_t budget_samples = clamp64(opt.time_budget_s / t_sample, opt.min_samples, opt.max_samples);

  std::vector<double> seconds;
  double poison_s = 0;  // Workload::begin_timed_batch, outside every timed window
  // OSU's collective figure (each rank's mean, averaged over ranks) needs this rank's own times,
  // which the max over ranks replaces: sum them on the way.
  double own_sum = 0;
  std::int64_t own_count = 0;
  // Accounting::copy_level_witness: every rank times its copy level right before the timed batches
  // and right after them (a level can change within a job). Two entries per rank, 0 where a rank
  // has none, so the max over ranks hands every rank the whole list (the accounting is the same on
  // every rank, so every rank calls it).
  std::vector<double> levels;
  const auto read_levels = [&](std::size_t which) {
    if (levels.empty()) levels.assign(2 * static_cast<std::size_t>(group.size()), 0.0);
    if (const auto us = workload.copy_level_us()) levels[2 * static_cast<std::size_t>(group.rank()) + which] = *us;
  };
  if (a.copy_level_witness) read_levels(0);
  // Around the timed batches (a soak's series included), outside every sample.
  const HostActivityWindow activity;
  auto reduce_over_ranks = [&](std::vector<double>& v) {
    for (double x : v) own_sum += x;
    own_count += static_cast<std::int64_t>(v.size());
    group.max_over_ranks(v);
  };
  if (opt.soak_s > 0) {
    // Noise over time (--soak): one operation per sample, so each sample is one iteration of the
    // series; clocks that cannot time one operation (GPU events at small sizes) keep their batch.
    // No precision stopping: the series is the measurement.
    if (a.min_sample_s <= opt.min_sample_s) ops = 1;
    m.soak_s = opt.soak_s;
    const double per_sample = std::max(median_of(warm), 1e-9) * static_cast<double>(ops);
    t0 = Clock::now();
    // One batch for the data check: the series' samples are what must have written the destination.
    poison_s += timed_apart([&] { workload.begin_timed_batch(); });
    soak(workload, group, opt.soak_s, ops, per_sample, seconds, m.sample_starts, m.soak_capped);
    if (a.max_over_ranks) reduce_over_ranks(seconds);
    m.stop_reason = StopReason::Fixed;
    m.batches = 1;
  } else {
    const bool fixed = opt.precision <= 0;
    m.precision_target = fixed ? 0 : opt.precision;
    std::int64_t batch = fixed ? budget_samples : std::min(budget_samples, std::max(opt.min_samples, kFirstBatchSamples));
    batch = group.broadcast(batch);
    double timed_s = 0;  // sample time so far, by the workload's own clock
    t0 = Clock::now();
    while (true) {
      std::vector<double> got;
      got.reserve(static_cast<std::size_t>(batch));
      // Before EVERY timed batch: the last is only known afterwards, and the check must find what it
      // wrote. Ranks poison for different times (senders have nothing to poison): line them up after.
      poison_s += timed_apart([&] { workload.begin_timed_batch(); });
      group.barrier();
      const auto batch_start = Clock::now();
      workload.run(batch, ops, got);
      const double batch_wall = since(batch_start);
      if (a.max_over_ranks) reduce_over_ranks(got);
      ++m.batches;
      // The budget is spent by whichever is larger: the samples' own time, or the batch's wall time.
      // A workload can run more than its samples say (reference.mpi_pingpong times 2000 half round
      // trips per sample it reports), and sizing on the samples alone would then double its batches
      // far past the budget.
      double batch_sampled = 0;
      for (double s : got) batch_sampled += s * static_cast<double>(ops);
      timed_s += std::max(batch_sampled, batch_wall);
      seconds.insert(seconds.end(), got.begin(), got.end());
      std::vector<double> sorted = seconds;
      std::sort(sorted.begin(), sorted.end());
      const MedianInterval ci = median_interval(sorted);
      m.precision_reached = ci.half_width;
      if (fixed) {
        m.stop_reason = StopReason::Fixed;
        break;
      }
      // Rank 0's view decides for everyone (0 = go on), so that every rank runs the same batches.
      const auto total = static_cast<std::int64_t>(seconds.size());
      const double per_sample = timed_s / static_cast<double>(total);
      const std::int64_t room = opt.time_budget_s > timed_s ? static_cast<std::int64_t>((opt.time_budget_s - timed_s) / per_sample) : 0;
      std::int64_t next = 0;
      StopReason why = StopReason::Precision;
      if (ci.defined && ci.half_width <= opt.precision) {
        why = StopReason::Precision;
      } else if (total >= opt.max_samples) {
        why = StopReason::MaxSamples;
      } else if (room < 1) {
        why = StopReason::Budget;
      } else {
        // Double the total, within what the budget and max_samples leave.
        next = std::min({total, room, opt.max_samples - total});
      }
      next = group.broadcast(next);
      why = static_cast<StopReason>(group.broadcast(static_cast<std::int64_t>(why)));
      if (next < 1) {
        m.stop_reason = why;
        break;
      }
      batch = next;
    }
  }
  m.cost.timed_s = since(t0) - poison_s;  // poisoning is the data check's cost, not the samples'
  m.finished_at = Clock::now();
  m.activity = activity.close(group, same_node(group.rank_nodes()));
  if (a.copy_level_witness) {
    read_levels(1);
    group.max_over_ranks(levels);
    m.copy_level_us = std::move(levels);
  }
  if (a.max_over_ranks) m.rank_mean_s =
      group.mean_over_ranks(own_count ? own_sum / static_cast<double>(own_count) : 0.0, own_count > 0) / a.steps_per_op;
  // Only a clock that times one operation or its own loop per sample enqueues inside its window.
  // Every rank takes this branch alike (the accounting is the same on every rank), so the
  // reduction's calls match; a rank past a pair's two ends brings no value.
  if (a.one_op_per_sample) {
    std::vector<double> pace;
    if (const auto s = workload.host_enqueue_s()) pace.push_back(*s);
    if (a.max_over_ranks) group.max_over_ranks(pace);  // the slowest rank's enqueueing paces the loop
    if (!pace.empty() && pace.front() > 0) m.host_enqueue_s = pace.front();
  }

  m.seconds_per_op = median_of(seconds);
  if (a.steps_per_op > 1)
    for (double& s : seconds) s /= a.steps_per_op;

  t0 = Clock::now();
  Verification local = workload.verify();
  m.verification = local;
  m.verification.method = workload.verify_method();
  m.verification.ok = group.all(local.ok);
  m.verification.bytes_checked = static_cast<std::uint64_t>(group.sum(static_cast<std::int64_t>(local.bytes_checked)));
  if (!m.verification.ok) {
    // Rank 0 writes the record: tell it which ranks failed and how.
    const auto details = group.gather_strings(local.ok ? "" : local.detail);
    std::string merged;
    for (std::size_t r = 0; r < details.size(); ++r)
      if (!details[r].empty()) merged += (merged.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + ": " + details[r];
    if (group.rank() == 0) m.verification.detail = merged.empty() ? "data check failed on another rank" : merged;
  }
  m.cost.check_s = since(t0) + poison_s;

  m.sample_count = static_cast<std::int64_t>(seconds.size());
  m.ops_per_sample = ops;
  m.warmup_samples = warmup;
  m.stats = summarize(seconds);
  m.samples = opt.soak_s > 0 ? seconds : reservoir_sample(seconds, opt.reservoir);
  return m;
}

Verification confirm(Workload& workload, Context& ctx, Measurement& first) {
  const RunOptions& opt = ctx.options;
  Group& group = ctx.group;
  const Accounting& a = first.accounting;
  const std::int64_t ops = first.ops_per_sample;
  const double separation = std::chrono::duration<double>(Clock::now() - first.finished_at).count();
  // Re-warm after the resize (two samples, untimed; one when slow), then one batch: kConfirmBudgetShare of the
  // point's budget at most, at least 3 samples so that a median exists.
  // A slow sample (a slow-op share of the budget) is warm after one: its single op is a whole window
  // of messages or a large copy.
  const double t_sample = std::max(first.seconds_per_op, 1e-9) * static_cast<double>(ops);
  std::int64_t rewarm = t_sample >= kSlowOpShare * opt.time_budget_s ? 1 : 2;
  // A workload that is warm only once walked whole (a chase) walks it again, then has its point's
  // own warm-up again: the rest of the sweep ran in between and its caches hold other sizes, and
  // a cache's state under a chain near its size builds over many laps (on the 2-core VM a 1 MiB
  // chain read 6-7 ns a load after its point's warm-up of about 50 laps, 20-25 ns after one).
  if (a.warm_steps > 0) rewarm = lap_samples(a, ops, first.seconds_per_op, opt.time_budget_s) + first.warmup_samples;
  rewarm = group.broadcast(rewarm);
  const std::int64_t samples = group.broadcast(clamp64(kConfirmBudgetShare * opt.time_budget_s / t_sample, 3, kConfirmSamples));
  // Opened before the re-warm, not between it and the batch: reading the host's counters evicts
  // a few lines, and a chain the size of a cache took 5-40 samples to settle after that (a 1 MiB
  // chain on the 2-core VM: 9-11 ns a load, then 6.3-7), more than a confirmation batch has. Before
  // the barrier too: its reads would otherwise hold rank 0 back while the others start.
  const HostActivityWindow activity;
  std::vector<double> warm;
  workload.run(rewarm, ops, warm);
  std::vector<double> got;
  workload.begin_timed_batch();
  group.barrier();
  workload.run(samples, ops, got);
  const HostActivity during = activity.close(group, same_node(group.rank_nodes()));
  if (a.max_over_ranks) group.max_over_ranks(got);
  if (a.steps_per_op > 1)
    for (double& s : got) s /= a.steps_per_op;
  Verification local = workload.verify();
  Verification v = local;
  v.method = workload.verify_method();
  v.ok = group.all(local.ok);
  if (!v.ok && group.rank() == 0 && v.detail.empty()) v.detail = "data check failed on another rank";
  if (v.ok) {
    first.stability = judge_stability(first, median_of(got), static_cast<std::int64_t>(got.size()));
    first.stability.separation_s = separation;
    first.stability.activity = during;
  }
  return v;
}

}  // namespace commatlas
