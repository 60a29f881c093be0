"""`commatlas compare RUN_A RUN_B ...`: what differs between runs, machine first, then numbers.

Every later run is compared with the first (the baseline). A point has changed when its figure
moved by more than two runs of the same thing move on their own. One run's own samples cannot
say that: between runs the clocks, the placement of pages and threads and the other jobs change,
and two identical default runs differ by far more than the spread within either. So the
tolerance comes from run-to-run variation:

- when the runs hold `--repeat` passes, from how far the repetitions of these very runs lie apart
  (pooled per metric and size range: the 95th percentile of |a / b - 1| over every pair of
  repetitions of one point), and the figure compared is the median over the repetitions;
- otherwise from DEFAULT_BANDS, measured from identical default runs back to back
  (scripts/compare_tolerance.py; scripts/device/compare_tolerance.sh on a GPU machine).

Two figures of a point must both have moved, the same way: the median and the fast end (the p5
time). Other jobs on the machine only ever slow samples down, so on a shared machine the median
can move by 2x between identical runs while the fast end stays put; a change of code or
settings moves both.

Parameters that hold one value over a whole benchmark in each run but differ between the runs
(`--threads 1` against the default) are settings of the run: points are matched across them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any, Iterable

import numpy as np
from rich.console import Console
from rich.table import Table

from commatlas.errors import UsageError
from commatlas.outputs import write_text
from commatlas.report.bestmap import value_of
from commatlas.report.templating import render
from commatlas.results import Result, Run, load_run
from commatlas.units import format_ratio, format_size, format_value

KiB, MiB = 1 << 10, 1 << 20
TERMINAL_ROWS = 40
HTML_ALL_ROWS = 3000  # above this, the HTML lists only the points that changed
HTML_NAME = "compare.html"
# A --repeat tolerance needs this many pairs of repetitions in its band; fewer: the default.
MIN_REPEAT_PAIRS = 8
REPEAT_QUANTILE = 0.95
# Meta fields that decide whether two runs are comparable at all.
META_FIELDS = ("commatlas_version", "engine", "topology.gpus", "environment", "options", "launcher")


@dataclass(frozen=True)
class Band:
    """Points of one metric within one size range, which share one tolerance."""

    metric: str
    min_bytes: int
    max_bytes: int | None  # exclusive; None: no upper end
    tolerance: float       # |other / base - 1| beyond which a point has changed

    def holds(self, metric: str, size: int | None) -> bool:
        size = size or 0
        return metric == self.metric and size >= self.min_bytes and (self.max_bytes is None or size < self.max_bytes)

    @property
    def label(self) -> str:
        if self.max_bytes is None:
            sizes = f"≥ {format_size(self.min_bytes)}"
        elif self.min_bytes <= 1:
            sizes = f"< {format_size(self.max_bytes)}"
        else:
            sizes = f"{format_size(self.min_bytes)} – {format_size(self.max_bytes)}"
        return f"{self.metric} {sizes}"


# Measured with scripts/compare_tolerance.py on identical default runs back to back on GPU machines
# (results/nvidia-h100-x1/atlas-default, results/nvidia-h200-x2/atlas-1gpu: 95th percentile of how far
# a point moved: bandwidth < 64 KiB 18%, 64 KiB - 2 MiB 14%, >= 2 MiB 13%, latency 17% and 19%), set
# so that both pairs call at least 95% of their points "no change" (96.1% and 95.8%). 64 KiB - 2 MiB
# keeps 10%, under the 15% change a test must see (its identical points move mostly with the host:
# pageable and managed paths). The first bands, from a 2-core VM at load ~20, were 50% for small and
# DRAM-sized bandwidths: a 30% slower 256 MiB copy passed as "no change". Use --repeat for sharp verdicts.
DEFAULT_BANDS = (
    Band("bandwidth", 0, 64 * KiB, 0.30),
    Band("bandwidth", 64 * KiB, 2 * MiB, 0.10),
    Band("bandwidth", 2 * MiB, None, 0.20),
    Band("latency", 0, 64 * KiB, 0.25),
    Band("latency", 64 * KiB, None, 0.25),
)
DEFAULT_SOURCE = "identical default runs back to back on an H100 and an H200 (scripts/compare_tolerance.py)"


def band_of(bands: Iterable[Band], metric: str, size: int | None) -> Band | None:
    return next((b for b in bands if b.holds(metric, size)), None)


@dataclass(frozen=True)
class Rule:
    """How "changed" was decided: which tolerances, and where they came from."""

    kind: str                  # "repeats" or "default"
    bands: tuple[Band, ...]
    text: str

    def tolerance(self, metric: str, size: int | None) -> float:
        band = band_of(self.bands, metric, size)
        # A metric without a band (a new one): the widest default is the safe side.
        return band.tolerance if band else max(b.tolerance for b in DEFAULT_BANDS)


def bands_text(bands: Iterable[Band]) -> str:
    return "; ".join(f"{b.label}: ±{b.tolerance:.0%}" for b in bands)


DEFAULT_RULE = Rule("default", DEFAULT_BANDS,
                    f"default tolerance (the runs have no --repeat passes), from {DEFAULT_SOURCE}: "
                    + bands_text(DEFAULT_BANDS))


@dataclass(frozen=True)
class Verdict:
    different: bool
    why: str


@dataclass(frozen=True)
class PointDelta:
    benchmark: str
    variant: str
    size: int | None
    metric: str
    base: float
    other: float
    ratio: float        # other / base in the metric's unit
    improvement: float  # > 1: the other run is better (faster), whatever the metric
    verdict: Verdict


@dataclass(frozen=True)
class WinnerChange:
    """A cell of answers.json whose fastest way changed between the runs."""

    movement: str
    bin: str
    base: str
    other: str
    beyond_noise: bool
    why: str


@dataclass
class RunComparison:
    base: Run
    other: Run
    meta_diffs: list[tuple[str, str, str]]
    rule: Rule = DEFAULT_RULE
    points: list[PointDelta] = field(default_factory=list)
    only_base: int = 0
    only_other: int = 0
    settings: list[str] = field(default_factory=list)  # "host.memcpy threads: 2 → 1"
    winners: list[WinnerChange] = field(default_factory=list)
    winners_note: str = ""  # why winners were not compared, when they were not

    @property
    def different(self) -> list[PointDelta]:
        return [p for p in self.points if p.verdict.different]


# --- matching points ------------------------------------------------------------------------------

PointKey = tuple[str, tuple[tuple[str, str], ...], int, int | None]


def run_settings(base: list[Result], other: list[Result]) -> dict[str, set[str]]:
    """Per benchmark, the parameters that hold one value in each run and differ between them."""
    values: dict[tuple[str, str], tuple[set[str], set[str]]] = {}
    for side, results in enumerate((base, other)):
        for r in results:
            for name, value in r.params_key:
                values.setdefault((r.benchmark, name), (set(), set()))[side].add(value)
    settings: dict[str, set[str]] = {}
    for (benchmark, name), (a, b) in values.items():
        if len(a) == 1 and len(b) == 1 and a != b:
            settings.setdefault(benchmark, set()).add(name)
    return settings


def point_key(r: Result, settings: dict[str, set[str]]) -> PointKey:
    ignored = settings.get(r.benchmark, set())
    return (r.benchmark, tuple(kv for kv in r.params_key if kv[0] not in ignored), r.ranks, r.bytes)


def group_points(results: list[Result], settings: dict[str, set[str]]) -> dict[PointKey, list[Result]]:
    """Verified results per point; one per --repeat pass."""
    groups: dict[PointKey, list[Result]] = {}
    for r in results:
        if r.verified_ok and math.isfinite(value_of(r)) and value_of(r) > 0:
            groups.setdefault(point_key(r, settings), []).append(r)
    return groups


def fast_end(r: Result) -> float:
    """The figure of the p5 time: the fastest samples, which other jobs cannot make faster."""
    if r.metric == "bandwidth":
        return r.bytes_per_op / r.stats.p5_s / 1e9 if r.stats.p5_s > 0 else math.nan
    return r.stats.p5_s * 1e6


@dataclass(frozen=True)
class Figures:
    median: float  # in the metric's unit; over --repeat passes, the median of the passes'
    fast: float


def center(results: list[Result]) -> Figures:
    return Figures(float(np.median([value_of(r) for r in results])), float(np.median([fast_end(r) for r in results])))


def relative_move(a: float, b: float) -> float:
    """Signed: +0.1 when b is 10% above a, -0.1 when a is 10% above b (symmetric in a and b)."""
    if not (a > 0 and b > 0):
        return math.nan
    return b / a - 1 if b >= a else -(a / b - 1)


def moved(a: Figures, b: Figures) -> float:
    """How far a point moved by both figures: the smaller move when median and fast end moved the
    same way, 0 when they disagree (one of them is noise)."""
    m, f = relative_move(a.median, b.median), relative_move(a.fast, b.fast)
    if not (math.isfinite(m) and math.isfinite(f)):
        return m if math.isfinite(m) else 0.0
    if (m > 0) != (f > 0):
        return 0.0
    return min(abs(m), abs(f))


# --- the rule -------------------------------------------------------------------------------------

def repeat_deviations(groups: Iterable[tuple[PointKey, list[Result]]]) -> dict[Band, list[float]]:
    """|a / b - 1| for every pair of repetitions of one point, per default band."""
    pooled: dict[Band, list[float]] = {}
    for _, results in groups:
        repeats = {r.repeat for r in results}
        if len(results) < 2 or None in repeats or len(repeats) < len(results):
            continue
        band = band_of(DEFAULT_BANDS, results[0].metric, results[0].bytes)
        if band is None:
            continue
        figures = [center([r]) for r in results]
        pooled.setdefault(band, []).extend(moved(a, b) for a, b in combinations(figures, 2))
    return pooled


def choose_rule(base: dict[PointKey, list[Result]], other: dict[PointKey, list[Result]]) -> Rule:
    pooled = repeat_deviations([*base.items(), *other.items()])
    if not pooled:
        return DEFAULT_RULE
    bands, parts = [], []
    for default in DEFAULT_BANDS:
        pairs = pooled.get(default, [])
        if len(pairs) >= MIN_REPEAT_PAIRS:
            tolerance = float(np.quantile(pairs, REPEAT_QUANTILE))
            bands.append(Band(default.metric, default.min_bytes, default.max_bytes, tolerance))
            parts.append(f"{default.label}: ±{tolerance:.1%} ({len(pairs)} pairs)")
        else:
            bands.append(default)
            parts.append(f"{default.label}: ±{default.tolerance:.0%} (default: {len(pairs)} pairs)")
    text = (f"run-to-run variation of the --repeat passes (the {REPEAT_QUANTILE:.0%} quantile of how far two "
            f"repetitions of one point differ; figures are medians over the repetitions): " + "; ".join(parts))
    return Rule("repeats", tuple(bands), text)


def judge(base: Figures, other: Figures, metric: str, size: int | None, rule: Rule) -> Verdict:
    tolerance = rule.tolerance(metric, size)
    both = moved(base, other)
    if both > tolerance:
        return Verdict(True, f"median and fast end moved ≥ {both:.0%}, beyond ±{tolerance:.0%}")
    median = abs(relative_move(base.median, other.median))
    if median > tolerance:
        return Verdict(False, f"median moved {median:.0%}, the fast end {abs(relative_move(base.fast, other.fast)):.0%}: noise")
    return Verdict(False, f"within ±{tolerance:.0%}")


# --- comparing ------------------------------------------------------------------------------------

def compare_runs(paths: list[str | Path]) -> list[RunComparison]:
    """`RUN@LIBRARY` takes only that MPI library's records of a run (commatlas run --mpi a,b), so
    two libraries of one run compare side by side: `compare RUN@openmpi RUN@mpich`."""
    if len(paths) < 2:
        raise UsageError("compare needs at least two runs")
    runs = [load_library_run(p) for p in paths]
    return [compare_two(runs[0], other) for other in runs[1:]]


def load_library_run(path: str | Path) -> Run:
    text = str(path)
    if "@" not in text or Path(text).exists():
        return load_run(path)
    from commatlas.mpi_libraries import normalise

    where, wanted = text.rsplit("@", 1)
    run = load_run(where)
    names = {r.mpi_library for r in run.results if r.mpi_library}

    def matches(label: str) -> bool:
        name = label.rsplit(" ", 1)[0]
        return normalise(wanted) in (normalise(label), normalise(name))

    chosen = {n for n in names if matches(n)}
    if not chosen:
        raise UsageError(f"{where} holds no records of the MPI library {wanted!r} (it has: {', '.join(sorted(names)) or 'none'})")
    run.results = [r for r in run.results if not r.mpi_library or r.mpi_library in chosen]
    run.notes = [*run.notes, f"only the records of {', '.join(sorted(chosen))} (and those without MPI)"]
    return run


def compare_two(base: Run, other: Run) -> RunComparison:
    settings = run_settings(base.results, other.results)
    groups_a, groups_b = group_points(base.results, settings), group_points(other.results, settings)
    rule = choose_rule(groups_a, groups_b)
    out = RunComparison(base, other, meta_differences(base.meta or {}, other.meta or {}), rule)
    out.settings = settings_text(settings, base.results, other.results)
    for key, results in groups_b.items():
        a = groups_a.get(key)
        if a is None:
            out.only_other += 1
            continue
        r = results[0]
        fa, fb = center(a), center(results)
        va, vb = fa.median, fb.median
        ratio = vb / va
        improvement = ratio if r.metric == "bandwidth" else 1 / ratio
        variant = ", ".join(f"{k}={v}" for k, v in key[1]) + (f", {r.ranks} ranks" if r.ranks > 1 else "")
        out.points.append(PointDelta(r.benchmark, variant or "-", r.bytes, r.metric, va, vb, ratio, improvement,
                                     judge(fa, fb, r.metric, r.bytes, rule)))
    out.only_base = len(set(groups_a) - set(groups_b))
    out.winners, out.winners_note = compare_winners(base, other, rule)
    return out


def settings_text(settings: dict[str, set[str]], base: list[Result], other: list[Result]) -> list[str]:
    def value(results: list[Result], benchmark: str, name: str) -> str:
        return next(v for r in results if r.benchmark == benchmark for k, v in r.params_key if k == name)

    return [f"{benchmark} {name}: {value(base, benchmark, name)} → {value(other, benchmark, name)}"
            for benchmark in sorted(settings) for name in sorted(settings[benchmark])]


def compare_winners(base: Run, other: Run, rule: Rule) -> tuple[list[WinnerChange], str]:
    """Cells of answers.json (helper module commatlas.answers) whose winner changed; a change is
    beyond the noise when each run's winner led its runner-up by more than the tolerance."""
    try:
        from commatlas.answers import compute_answers  # type: ignore[attr-defined]
    except ImportError:
        return [], "winners not compared: this installation has no commatlas.answers"
    try:
        answers = [compute_answers(base), compute_answers(other)]
    except Exception as e:  # noqa: BLE001 - the point-by-point comparison stands without it
        return [], f"winners not compared: {type(e).__name__}: {e}"
    cells = [{(m["key"], c["bin"]): (m, c) for m in a.get("movements", []) for c in m.get("cells", [])
              if c.get("winner")} for a in answers]
    changes = []
    for key in sorted(set(cells[0]) & set(cells[1])):
        (movement, a), (_, b) = cells[0][key], cells[1][key]
        wa, wb = winner_name(a["winner"]), winner_name(b["winner"])
        if wa == wb:
            continue
        tolerance = rule.tolerance(movement.get("metric", ""), b.get("bytes"))
        margins = [c.get("margin") or 1.0 for c in (a, b)]
        clear = all(m - 1 > tolerance for m in margins)
        why = (f"each run's winner led by more than ±{tolerance:.0%}" if clear else
               f"a margin within ±{tolerance:.0%} (×{margins[0]:.2f}, ×{margins[1]:.2f}): a tie")
        changes.append(WinnerChange(movement.get("label", key[0]), key[1], wa, wb, clear, why))
    return changes, ""


def winner_name(winner: dict[str, Any]) -> str:
    choices = " ".join(f"{k}={v}" for k, v in sorted((winner.get("choices") or {}).items()))
    return " ".join(p for p in (str(winner.get("benchmark", "?")), choices) if p)


# --- metadata -------------------------------------------------------------------------------------

def meta_differences(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, str, str]]:
    fa: dict[str, str] = {}
    fb: dict[str, str] = {}
    for name in META_FIELDS:
        _flatten(_get(a, name), name, fa)
        _flatten(_get(b, name), name, fb)
    return [(k, fa.get(k, "(absent)"), fb.get(k, "(absent)")) for k in sorted(set(fa) | set(fb))
            if fa.get(k) != fb.get(k)]


def _get(d: Any, dotted: str) -> Any:
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


# --- output ---------------------------------------------------------------------------------------

def headline(c: RunComparison) -> str:
    n = len(c.points)
    return f"{len(c.different)} of {n} common points changed beyond run-to-run variation"


def print_comparison(comparisons: list[RunComparison], console: Console) -> None:
    for c in comparisons:
        console.rule(f"{c.base.directory} → {c.other.directory}")
        if c.meta_diffs:
            meta = Table(title="metadata differences", title_justify="left")
            for col in ("field", "baseline", "other"):
                meta.add_column(col, overflow="fold")
            for k, a, b in c.meta_diffs:
                meta.add_row(k, a, b)
            console.print(meta)
        else:
            console.print("metadata: no difference in versions, host, GPUs, environment, options")
        if c.settings:
            console.print("matched across run settings: " + "; ".join(c.settings))
        console.print(f"rule: {c.rule.text}")
        rows = sorted(c.points, key=lambda p: (not p.verdict.different, -abs(math.log(p.improvement))
                                               if p.improvement > 0 else 0))
        table = Table(title=headline(c), title_justify="left")
        for col in ("benchmark", "variant", "size", "baseline", "other", "ratio", "verdict"):
            table.add_column(col, overflow="fold")
        for p in rows[:TERMINAL_ROWS]:
            style = ("green" if p.improvement > 1 else "red") if p.verdict.different else "dim"
            verdict = (("better: " if p.improvement > 1 else "worse: ") + p.verdict.why
                       if p.verdict.different else p.verdict.why)
            table.add_row(p.benchmark, p.variant, format_size(p.size), format_value(p.base, p.metric),
                          format_value(p.other, p.metric), format_ratio(p.ratio), verdict, style=style)
        console.print(table)
        if len(rows) > TERMINAL_ROWS:
            console.print(f"… {len(rows) - TERMINAL_ROWS} more rows in the HTML file")
        if c.only_base or c.only_other:
            console.print(f"points only in the baseline: {c.only_base}; only in the other run: {c.only_other}")
        print_winners(c, console)


def print_winners(c: RunComparison, console: Console) -> None:
    if c.winners_note:
        console.print(c.winners_note)
        return
    real = [w for w in c.winners if w.beyond_noise]
    console.print(f"winners: {len(real)} of the fastest ways changed beyond the noise"
                  + (f" ({len(c.winners) - len(real)} more swapped places within it)" if len(c.winners) > len(real) else ""))
    for w in real:
        console.print(f"  {w.movement}, {w.bin}: {w.base} → {w.other} ({w.why})")


def default_html_path(comparisons: list[RunComparison]) -> Path:
    """Next to the runs: in the directory of the last run compared."""
    return comparisons[-1].other.directory / HTML_NAME


def write_comparison_html(comparisons: list[RunComparison], out: str | Path | None = None) -> Path:
    path = Path(out) if out is not None else default_html_path(comparisons)
    write_text(path, render("compare.html.j2", dict(comparisons=comparisons, all_rows=HTML_ALL_ROWS,
                                                    headline=headline)))
    return path
