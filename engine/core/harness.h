// The one timing harness every benchmark goes through.
//
// measure() decides how many operations make a sample and how many samples fill the time budget,
// warms up, runs the timed loop, reduces over ranks where the benchmark asks for it, and checks
// the data afterwards. The clock-specific loops a Workload::run uses live here too, so that how a
// sample is timed is written once per clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "core/benchmark.h"
#include "core/context.h"
#include "core/stats.h"

namespace commatlas {

struct Measurement {
  Accounting accounting;
  Stats stats;                  // over every sample
  std::vector<double> samples;  // bounded reservoir of per-operation seconds, in arrival order
  // Soak only: every sample (in `samples`) and when each began, in seconds from the soak's start.
  std::vector<double> sample_starts;
  double soak_s = 0;           // the soak's planned length (0: not a soak)
  bool soak_capped = false;    // stopped at kMaxSoakSamples before the time was up
  // Why the path has no peak, where the node knows (an inter-node path whose NIC gives no rate).
  std::string peak_unknown;
  // Collectives: the goodput the node's link graph allows (topology/goodput.h), or why unknown.
  bool has_expected = false;
  double expected_gbps = 0;    // 0 with has_expected: unknown, expected_text says why
  std::string expected_text;
  std::int64_t sample_count = 0;
  std::int64_t ops_per_sample = 1;
  std::int64_t warmup_samples = 0;
  Verification verification;
};

// A soak keeps every sample: this bounds the record (two numbers per sample).
inline constexpr std::int64_t kMaxSoakSamples = 500000;

// Runs the workload under the context's budget. A failed data check is returned in
// `verification` (the caller records it as an error, never as a number).
Measurement measure(Workload& workload, Context& ctx);

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
