"""`commatlas compare RUN_A RUN_B ...`: what differs between runs, machine first, then numbers.

Every later run is compared with the first (the baseline). A point differs beyond the noise
when the two p5–p95 ranges do not overlap, or when a Mann–Whitney U test on the two sample
reservoirs gives p < MWU_P and the medians differ by more than MIN_SHIFT: the per-iteration
samples decide, not the medians alone.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from commatlas.errors import UsageError
from commatlas.report.bestmap import spread_of, value_of
from commatlas.report.templating import render
from commatlas.units import format_ratio, format_size, format_value
from commatlas.results import Result, Run, load_run

MWU_P = 1e-3
MIN_SHIFT = 0.02
MIN_MWU_SAMPLES = 8
TERMINAL_ROWS = 40
HTML_ALL_ROWS = 3000  # above this, the HTML lists only the points that differ
NOISE_RULE = (f"different when the p5–p95 ranges do not overlap, or when a Mann–Whitney U test on the "
              f"per-iteration samples gives p < {MWU_P:g} and the medians differ by more than {MIN_SHIFT:.0%}")
# Meta fields that decide whether two runs are comparable at all.
META_FIELDS = ("commatlas_version", "engine", "topology.gpus", "environment", "options", "launcher")


@dataclass(frozen=True)
class Verdict:
    different: bool
    why: str
    p_value: float


@dataclass(frozen=True)
class PointDelta:
    benchmark: str
    variant: str
    size: int | None
    metric: str
    base: float
    other: float
    ratio: float  # other / base in the metric's unit
    improvement: float  # > 1: the other run is better (faster), whatever the metric
    verdict: Verdict


@dataclass
class RunComparison:
    base: Run
    other: Run
    meta_diffs: list[tuple[str, str, str]]
    points: list[PointDelta] = field(default_factory=list)
    only_base: int = 0
    only_other: int = 0

    @property
    def different(self) -> list[PointDelta]:
        return [p for p in self.points if p.verdict.different]


def mann_whitney_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p of the Mann–Whitney U test (normal approximation, tie-corrected)."""
    n1, n2 = a.size, b.size
    if n1 == 0 or n2 == 0:
        return 1.0
    both = np.concatenate([a, b])
    values, inverse, counts = np.unique(both, return_inverse=True, return_counts=True)
    # Tied values share the mean of the ranks they span.
    first_rank = np.cumsum(counts) - counts + 1
    ranks = (first_rank + (counts - 1) / 2.0)[inverse]
    u = ranks[:n1].sum() - n1 * (n1 + 1) / 2.0
    n = n1 + n2
    ties = float(((counts ** 3) - counts).sum())
    sigma = math.sqrt(n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1)))) if n > 1 else 0.0
    if sigma == 0:
        return 1.0
    z = (abs(u - n1 * n2 / 2.0) - 0.5) / sigma
    return math.erfc(max(z, 0.0) / math.sqrt(2))


def judge(a: Result, b: Result) -> Verdict:
    a_lo, a_hi = spread_of(a)
    b_lo, b_hi = spread_of(b)
    if b_lo > a_hi or a_lo > b_hi:
        return Verdict(True, "p5–p95 ranges do not overlap", math.nan)
    sa, sb = a.samples, b.samples
    sa, sb = sa[np.isfinite(sa)], sb[np.isfinite(sb)]
    if sa.size < MIN_MWU_SAMPLES or sb.size < MIN_MWU_SAMPLES:
        return Verdict(False, "ranges overlap (too few samples for a rank test)", math.nan)
    p = mann_whitney_p(sa, sb)
    shift = abs(value_of(b) / value_of(a) - 1) if value_of(a) > 0 else 0.0
    if p < MWU_P and shift > MIN_SHIFT:
        return Verdict(True, f"rank test p = {p:.1e}, shift {shift:.1%}", p)
    return Verdict(False, f"within noise (rank test p = {p:.2g})", p)


def compare_runs(paths: list[str | Path]) -> list[RunComparison]:
    if len(paths) < 2:
        raise UsageError("compare needs at least two runs")
    runs = [load_run(p) for p in paths]
    return [_compare(runs[0], other) for other in runs[1:]]


def _compare(base: Run, other: Run) -> RunComparison:
    out = RunComparison(base, other, meta_differences(base.meta or {}, other.meta or {}))
    index = {_point_key(r): r for r in base.results if r.verified_ok}
    seen = set()
    for r in other.results:
        k = _point_key(r)
        a = index.get(k)
        if a is None or not r.verified_ok:
            out.only_other += 1
            continue
        seen.add(k)
        va, vb = value_of(a), value_of(r)
        ratio = vb / va if va > 0 else math.nan
        improvement = ratio if r.metric == "bandwidth" else (1 / ratio if ratio > 0 else math.nan)
        variant = ", ".join(f"{key}={v}" for key, v in r.params_key) + (f", {r.ranks} ranks" if r.ranks > 1 else "")
        out.points.append(PointDelta(r.benchmark, variant or "-", r.bytes, r.metric, va, vb, ratio, improvement,
                                     judge(a, r)))
    out.only_base = len(set(index) - seen)
    return out


def _point_key(r: Result) -> tuple:
    return (r.benchmark, r.params_key, r.ranks, r.bytes)


def meta_differences(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, str, str]]:
    fa, fb = {}, {}
    for name in META_FIELDS:
        _flatten(_get(a, name), name, fa)
        _flatten(_get(b, name), name, fb)
    return [(k, fa.get(k, "(absent)"), fb.get(k, "(absent)")) for k in sorted(set(fa) | set(fb))
            if fa.get(k) != fb.get(k)]


def _get(d: dict[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        d = d.get(part) if isinstance(d, dict) else None
    return d


def _flatten(v: Any, prefix: str, out: dict[str, str]) -> None:
    if isinstance(v, dict):
        for k, x in v.items():
            _flatten(x, f"{prefix}.{k}", out)
    elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        for i, x in enumerate(v):
            _flatten(x, f"{prefix}[{i}]", out)
    elif v is not None:
        out[prefix] = str(v)


def print_comparison(comparisons: list[RunComparison], console: Console) -> None:
    for c in comparisons:
        console.rule(f"{c.base.directory} → {c.other.directory}")
        meta = Table(title="metadata differences", show_lines=False)
        for col in ("field", "baseline", "other"):
            meta.add_column(col, overflow="fold")
        for k, a, b in c.meta_diffs:
            meta.add_row(k, a, b)
        console.print(meta if c.meta_diffs else "metadata: no difference in versions, host, GPUs, environment, options")
        rows = sorted(c.points, key=lambda p: (not p.verdict.different, -abs(math.log(p.improvement))
                                               if p.improvement > 0 else 0))
        table = Table(title=f"{len(c.different)} of {len(c.points)} common points differ beyond the noise "
                            f"({NOISE_RULE})")
        for col in ("benchmark", "variant", "size", "baseline", "other", "ratio", "verdict"):
            table.add_column(col, overflow="fold")
        for p in rows[:TERMINAL_ROWS]:
            style = ("green" if p.improvement > 1 else "red") if p.verdict.different else "dim"
            table.add_row(p.benchmark, p.variant, format_size(p.size), format_value(p.base, p.metric),
                          format_value(p.other, p.metric), format_ratio(p.ratio),
                          ("better: " if p.improvement > 1 else "worse: ") + p.verdict.why
                          if p.verdict.different else p.verdict.why, style=style)
        console.print(table)
        if len(rows) > TERMINAL_ROWS:
            console.print(f"… {len(rows) - TERMINAL_ROWS} more rows in the HTML file")
        if c.only_base or c.only_other:
            console.print(f"points only in the baseline: {c.only_base}; only in the other run: {c.only_other}")


def write_comparison_html(comparisons: list[RunComparison], out: str | Path) -> Path:
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render("compare.html.j2", dict(comparisons=comparisons, rule=NOISE_RULE,
                                                    all_rows=HTML_ALL_ROWS)),
                    encoding="utf-8")
    return path
