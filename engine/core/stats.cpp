#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace commatlas {

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double pos = (q / 100.0) * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Stats summarize(std::vector<double> samples) {
  Stats s;
  s.count = static_cast<std::int64_t>(samples.size());
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.min = samples.front();
  s.max = samples.back();
  s.p5 = percentile_sorted(samples, 5);
  s.median = percentile_sorted(samples, 50);
  s.p95 = percentile_sorted(samples, 95);
  s.p99 = percentile_sorted(samples, 99);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(s.count);
  if (s.count > 1) {
    double ss = 0;
    for (double x : samples) ss += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(ss / static_cast<double>(s.count - 1));
  }
  s.cv = s.mean > 0 ? s.stddev / s.mean : 0.0;
  return s;
}

MedianInterval median_interval(const std::vector<double>& sorted, double level) {
  MedianInterval mi;
  const std::size_t n = sorted.size();
  mi.half_width = std::numeric_limits<double>::infinity();
  if (n == 0) return mi;
  mi.median = percentile_sorted(sorted, 50);
  // Largest k with P(B <= k - 1) <= tail, summed in log space (2^-n underflows past n ~ 1000).
  const double tail = (1 - level) / 2;
  const double log_total = static_cast<double>(n) * std::log(2.0);
  const double lg_n1 = std::lgamma(static_cast<double>(n) + 1);
  double cdf = 0;
  std::size_t k = 0;  // the number of order statistics below the interval
  for (std::size_t j = 0; j < n / 2; ++j) {
    cdf += std::exp(lg_n1 - std::lgamma(static_cast<double>(j) + 1) - std::lgamma(static_cast<double>(n - j) + 1) - log_total);
    if (cdf > tail) break;
    k = j + 1;
  }
  if (k == 0) return mi;
  mi.defined = true;
  mi.low = sorted[k - 1];
  mi.high = sorted[n - k];
  mi.half_width = mi.median > 0 ? (mi.high - mi.low) / 2 / mi.median : std::numeric_limits<double>::infinity();
  return mi;
}

std::vector<double> reservoir_sample(const std::vector<double>& samples, std::size_t capacity,
                                     std::uint64_t seed) {
  if (samples.size() <= capacity) return samples;
  // Choose which indices survive, then emit them in arrival order.
  std::vector<std::size_t> kept(capacity);
  std::iota(kept.begin(), kept.end(), 0);
  std::mt19937_64 rng(seed);
  for (std::size_t i = capacity; i < samples.size(); ++i) {
    std::uniform_int_distribution<std::size_t> pick(0, i);
    const std::size_t j = pick(rng);
    if (j < capacity) kept[j] = i;
  }
  std::sort(kept.begin(), kept.end());
  std::vector<double> out;
  out.reserve(capacity);
  for (std::size_t i : kept) out.push_back(samples[i]);
  return out;
}

}  // namespace commatlas
