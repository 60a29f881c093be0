"""Run-to-run variation of `commatlas run --repeat K`: how far the K medians of one point lie
apart, next to how wide one run's own samples are. A spread between repetitions much wider
than the spread within one is something the machine does between runs (clocks, placement,
other jobs), which no single run can show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from commatlas.io.points import point_key
from commatlas.io.results import Result

MAX_ROWS = 60

# Jobs (repetitions) of one side from which a minority whose own batches did not repeat no longer
# makes the point unstable: the other jobs' figures stand, and their spread is the tolerance.
OUTVOTED_FROM = 3


def side_unstable(flagged: int, jobs: int) -> bool:
    """Whether a side whose `flagged` of `jobs` records (one per job) say their batches did not repeat
    is unstable as a whole. One job: any says so. From OUTVOTED_FROM jobs: when at least half do.
    With more rounds (check-order --rounds 5 --in-order: 6 and 5 jobs), the chance that one job of
    a noisy point misses its confirmation grows, and the any-job rule made more evidence answer less
    (2x H100: 25 of 110 GPU-aware MPI and NCCL points unstable, each by one job or two, with the
    sides' medians within 0.92-1.07x of each other)."""
    if flagged == 0:
        return False
    return jobs < OUTVOTED_FROM or 2 * flagged >= jobs


@dataclass(frozen=True)
class RepeatSpread:
    benchmark: str
    params_key: tuple[tuple[str, str], ...]
    ranks: int
    bytes: int | None
    repeats: int
    run_to_run: float   # (max - min) / median of the per-repetition medians
    within_run: float   # median over repetitions of (p95 - p5) / median of the samples

    @property
    def variant(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.params_key) or "-"


def _relative_range(values: np.ndarray) -> float:
    middle = float(np.median(values))
    return float((values.max() - values.min()) / middle) if middle > 0 else float("nan")


def point_spreads(results: Iterable[Result]) -> list[RepeatSpread]:
    """One row per point measured in at least two repetitions."""
    groups: dict[tuple, dict[int, Result]] = {}
    for r in results:
        if r.repeat is not None:
            groups.setdefault(point_key(r), {})[r.repeat] = r
    rows = []
    for (benchmark, params, ranks, size), by_repeat in groups.items():
        if len(by_repeat) < 2:
            continue
        medians = np.array([r.stats.median_s for r in by_repeat.values()], dtype=float)
        within = np.array([(r.stats.p95_s - r.stats.p5_s) / r.stats.median_s if r.stats.median_s > 0 else np.nan
                           for r in by_repeat.values()], dtype=float)
        rows.append(RepeatSpread(benchmark, params, ranks, size, len(by_repeat), _relative_range(medians),
                                 float(np.nanmedian(within)) if np.isfinite(within).any() else float("nan")))
    return rows


def benchmark_spreads(results: Iterable[Result]) -> list[RepeatSpread]:
    """Per benchmark variant, the size whose medians varied most between repetitions."""
    worst: dict[tuple, RepeatSpread] = {}
    for row in point_spreads(results):
        key = (row.benchmark, row.params_key, row.ranks)
        if key not in worst or not (row.run_to_run <= worst[key].run_to_run):
            worst[key] = row
    rows = sorted(worst.values(), key=lambda r: (r.benchmark, r.params_key, r.ranks))
    return rows[:MAX_ROWS]
