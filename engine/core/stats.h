// Summary statistics over every timed sample, and the bounded reservoir that goes into results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace commatlas {

struct Stats {
  std::int64_t count = 0;
  double min = 0, p5 = 0, median = 0, mean = 0, p95 = 0, p99 = 0, max = 0;
  double stddev = 0;  // sample standard deviation (n-1)
  double cv = 0;      // stddev / mean
};

// Percentile q in [0, 100] of sorted values, linear interpolation between closest ranks
// (numpy's default), so Python re-computing from samples gets the same number.
double percentile_sorted(const std::vector<double>& sorted, double q);

Stats summarize(std::vector<double> samples);

// Keeps every sample up to `capacity`, otherwise a uniform random subset of that size
// (Algorithm R, fixed seed so a run is reproducible). Order of arrival is preserved for the
// kept samples, so drift over a run stays visible.
// Distribution-free confidence interval of the median: the order statistics x(k) and x(n+1-k)
// (1-based) with the largest k whose binomial tail P(Bin(n, 1/2) < k) stays within (1 - level) / 2.
// `half_width` is half the interval relative to the median. Fewer than 6 samples (at 95%) have no
// such interval: `defined` is false and the width is infinite.
struct MedianInterval {
  bool defined = false;
  double low = 0, high = 0, median = 0;
  double half_width = 0;  // (high - low) / 2 / median
};
MedianInterval median_interval(const std::vector<double>& sorted, double level = 0.95);

std::vector<double> reservoir_sample(const std::vector<double>& samples, std::size_t capacity,
                                     std::uint64_t seed = 0x5EED);

}  // namespace commatlas
