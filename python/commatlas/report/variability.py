"""Which measured points have a distribution a median does not describe.

Rules (printed in the report, so a reader can argue with them):
- heavy tail: p99 / median > HEAVY_TAIL_RATIO (from the record's statistics over every sample);
- bimodal: on the reservoir's log-samples, Sarle's bimodality coefficient
  BC = (skew² + 1) / (excess kurtosis + 3(n−1)²/((n−2)(n−3))) exceeds BC_UNIFORM (5/9, the value
  of a uniform distribution; a normal one gives 1/3), AND the best split in two groups (1-D
  two-means, exact over sorted samples) leaves each group at least MIN_MODE_SHARE of the samples
  with Ashman's D = √2·|μ1−μ2| / √(σ1²+σ2²) above ASHMAN_D. Both are needed: two-means alone
  splits any unimodal sample with D ≈ 2.7, and BC alone also rises for a one-sided tail.
  Needs MIN_SAMPLES samples of at least MIN_DISTINCT different values. Tested only where the
  spread p95/p5 − 1 exceeds MIN_SPREAD (two modes inside a narrower range cannot hide
  a behaviour worth a flag), widest first, at most MAX_TESTED points: reading every sample of a
  100,000-record run would cost more than the whole rest of the report.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from commatlas.io.results import Result

HEAVY_TAIL_RATIO = 2.0
ASHMAN_D = 2.0
MIN_MODE_SHARE = 0.10
MIN_SAMPLES = 20
BC_UNIFORM = 5 / 9
MIN_SPREAD = 0.10
MAX_TESTED = 3000
MIN_DISTINCT = 8
RULES = (f"heavy-tailed: p99/median > {HEAVY_TAIL_RATIO:g}; bimodal: on the log-samples, Sarle's bimodality "
         f"coefficient > 5/9 and the best two-group split leaves ≥{MIN_MODE_SHARE:.0%} of them in each group "
         f"with Ashman's D > {ASHMAN_D:g} "
         f"(needs ≥{MIN_SAMPLES} samples of ≥{MIN_DISTINCT} distinct values, so clock quantisation is not called a mode; "
         f"tested where p95/p5 − 1 > {MIN_SPREAD:.0%}, widest {MAX_TESTED} points first)")


@dataclass(frozen=True)
class Flag:
    result: Result
    kind: str  # "heavy tail" or "bimodal"
    score: float  # p99/median, or Ashman's D
    modes: tuple[float, float] | None = None  # seconds per op at each mode (geometric mean), bimodal only

    def describe(self) -> str:
        if self.kind == "bimodal" and self.modes:
            return f"bimodal (D = {self.score:.1f}; modes near {self.modes[0] * 1e6:.3g} µs and {self.modes[1] * 1e6:.3g} µs)"
        return f"heavy tail (p99/median = {self.score:.1f})"


def flag_points(results: list[Result]) -> list[Flag]:
    flags = [Flag(r, "heavy tail", r.stats.p99_s / r.stats.median_s) for r in results
             if r.stats.median_s > 0 and r.stats.p99_s / r.stats.median_s > HEAVY_TAIL_RATIO]
    flags.extend(_bimodal(results))
    return flags


def _bimodal(results: list[Result]) -> list[Flag]:
    # Records of equal reservoir length are tested together as one matrix: one numpy pass for
    # thousands of records instead of a Python loop over each.
    by_length: dict[int, list[tuple[Result, np.ndarray]]] = {}
    for r in _candidates(results):
        s = r.samples
        s = s[np.isfinite(s) & (s > 0)]
        if s.size >= MIN_SAMPLES:
            by_length.setdefault(s.size, []).append((r, s))
    flags: list[Flag] = []
    for n, group in by_length.items():
        x = np.sort(np.log(np.stack([s for _, s in group])), axis=1)
        d, share, m1, m2 = _two_means(x)
        # A coarse clock yields a few repeated values whose "modes" are quantisation, not behaviour.
        distinct = 1 + np.count_nonzero(np.diff(x, axis=1) > 0, axis=1)
        chosen = (d > ASHMAN_D) & (share >= MIN_MODE_SHARE) & (distinct >= MIN_DISTINCT) & (_sarle(x) > BC_UNIFORM)
        for i in np.nonzero(chosen)[0]:
            flags.append(Flag(group[i][0], "bimodal", float(d[i]), (math.exp(m1[i]), math.exp(m2[i]))))
    return flags


def _spread(r: Result) -> float:
    return r.stats.p95_s / r.stats.p5_s - 1 if r.stats.p5_s > 0 else 0.0


def _candidates(results: list[Result]) -> list[Result]:
    wide = [r for r in results if _spread(r) > MIN_SPREAD]
    wide.sort(key=_spread, reverse=True)
    return wide[:MAX_TESTED]


def _sarle(x: np.ndarray) -> np.ndarray:
    """Sarle's bimodality coefficient of each row, with the small-sample corrections."""
    n = x.shape[1]
    centred = x - x.mean(axis=1, keepdims=True)
    m2 = (centred ** 2).mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = (centred ** 3).mean(axis=1) / m2 ** 1.5
        k = (centred ** 4).mean(axis=1) / m2 ** 2 - 3
        skew = g * math.sqrt(n * (n - 1)) / (n - 2)
        kurt = ((n + 1) * k + 6) * (n - 1) / ((n - 2) * (n - 3))
        bc = (skew ** 2 + 1) / (kurt + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
    return np.nan_to_num(bc, nan=0.0)


def _two_means(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For each row of sorted x: Ashman's D, smaller group's share, and both group means at the
    split (after k of n samples) that minimises the summed within-group squared deviation."""
    rows, n = x.shape
    k = np.arange(1, n)  # size of the lower group
    c1 = np.cumsum(x, axis=1)[:, :-1]
    c2 = np.cumsum(x * x, axis=1)[:, :-1]
    total, total2 = c1[:, -1:] + x[:, -1:], c2[:, -1:] + x[:, -1:] ** 2
    ss_low = c2 - c1 * c1 / k
    ss_high = (total2 - c2) - (total - c1) ** 2 / (n - k)
    best = np.argmin(ss_low + ss_high, axis=1)
    r = np.arange(rows)
    k_best = k[best]
    m1 = c1[r, best] / k_best
    m2 = (total[:, 0] - c1[r, best]) / (n - k_best)
    v1 = np.maximum(ss_low[r, best] / k_best, 0)
    v2 = np.maximum(ss_high[r, best] / (n - k_best), 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(v1 + v2 > 0, math.sqrt(2) * np.abs(m2 - m1) / np.sqrt(v1 + v2), 0.0)
    share = np.minimum(k_best, n - k_best) / n
    return d, share, m1, m2
