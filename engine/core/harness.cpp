#include "core/harness.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace commatlas {
namespace {

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

}  // namespace

Measurement measure(Workload& workload, Context& ctx) {
  const RunOptions& opt = ctx.options;
  Group& group = ctx.group;
  Measurement m;
  m.accounting = workload.accounting();

  // First op: pays for first touch, lazy module loads, connection setup. Never kept.
  std::vector<double> probe;
  workload.run(1, 1, probe);
  probe.clear();
  workload.run(3, 1, probe);
  const double t_op_estimate = std::max(median_of(probe), 1e-9);

  // Rank 0 decides every count so that all ranks run the same number of operations.
  std::int64_t ops = 1;
  const double min_sample_s = std::max(opt.min_sample_s, m.accounting.min_sample_s);
  if (!m.accounting.one_op_per_sample)
    ops = clamp64(std::ceil(min_sample_s / t_op_estimate), 1, opt.max_ops_per_sample);
  ops = group.broadcast(ops);

  // Warm-up: about a tenth of the budget, at least two samples, at the calibrated batch size.
  std::int64_t warmup = clamp64(0.1 * opt.time_budget_s / (t_op_estimate * static_cast<double>(ops)), 2, 1000);
  warmup = group.broadcast(warmup);
  std::vector<double> warm;
  workload.run(warmup, ops, warm);
  // The first calls can be much slower than the rest (NCCL sets up its channels there, clocks ramp
  // up), so a batch sized on them is too short once warm: on 2x H200, 8-byte NCCL calls probed at
  // over 50 us ran at 8.6 us, one per event pair. Size the batch again on the warm time.
  if (!m.accounting.one_op_per_sample) {
    std::int64_t warm_ops = clamp64(std::ceil(min_sample_s / std::max(median_of(warm), 1e-9)), 1, opt.max_ops_per_sample);
    warm_ops = group.broadcast(warm_ops);
    if (warm_ops > ops) {
      ops = warm_ops;
      warm.clear();
      workload.run(warmup, ops, warm);
    }
  }
  const double t_sample = std::max(median_of(warm), 1e-9) * static_cast<double>(ops);
  std::int64_t samples = clamp64(opt.time_budget_s / t_sample, opt.min_samples, opt.max_samples);
  samples = group.broadcast(samples);

  std::vector<double> seconds;
  if (opt.soak_s > 0) {
    // One operation per sample, so each sample is one iteration of the series; clocks that cannot
    // time one operation (GPU events at small sizes) keep their batch.
    if (m.accounting.min_sample_s <= opt.min_sample_s) ops = 1;
    m.soak_s = opt.soak_s;
    const double per_sample = std::max(median_of(warm), 1e-9) * static_cast<double>(ops);
    soak(workload, group, opt.soak_s, ops, per_sample, seconds, m.sample_starts, m.soak_capped);
  } else {
    seconds.reserve(static_cast<std::size_t>(samples));
    group.barrier();
    workload.run(samples, ops, seconds);
  }
  if (m.accounting.max_over_ranks) group.max_over_ranks(seconds);
  if (m.accounting.steps_per_op > 1)
    for (double& s : seconds) s /= m.accounting.steps_per_op;

  Verification local = workload.verify();
  m.verification = local;
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

  m.sample_count = static_cast<std::int64_t>(seconds.size());
  m.ops_per_sample = ops;
  m.warmup_samples = warmup;
  m.stats = summarize(seconds);
  m.samples = opt.soak_s > 0 ? seconds : reservoir_sample(seconds, opt.reservoir);
  return m;
}

}  // namespace commatlas
