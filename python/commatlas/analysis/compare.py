"""`commatlas compare RUN_A RUN_B ...`: what differs between runs, machine first, then numbers.

Every later run is compared with the first (the baseline). A point has changed when its figure
moved by more than two runs of the same thing move on their own, on this machine. That tolerance
comes from the runs being compared, never from other machines:

- with `--repeat` passes, from how far the repetitions of these very runs lie apart (per metric and
  size range: the 95th percentile of |a / b - 1| over every pair of repetitions of one point, a
  benchmark's own pairs left out of the tolerance that judges it: `Rule.without`); the figure
  compared is then the median over the repetitions;
- otherwise from how far the points of one metric and size range moved between the two runs,
  around the range's common move: the 99th percentile of |move - common move| over its points,
  or Tukey's far-out fence of them (Q3 + 3 IQR) where that is wider, as it is in a range too small
  to have a 99th percentile of its own. A range of fewer than 30 points (a CPU machine's) takes
  these moves from its metric's points at every size, or from every point where the metric has
  fewer: from its own few, about one of them would lie beyond whatever happened. It moved as a
  whole where that pool did, if it did not on its own. A range whose own moves are too wide to
  judge by lends them to no other.
  A point's own run-to-run variation is not in its samples (between runs the clocks, the pages and
  the other jobs change; inside one run they do not), but the many points of a range measured in
  the same two runs show it. The common move is taken out first, so a change that moves every
  point alike cannot widen the tolerance; it is judged on its own (a sign test over the range's
  points): a range whose points moved one way, by more than twice their typical distance from
  that move, moved as a whole, and each point that went with it has changed.

A point is never judged tighter than its own records allow: the spread of its passes separated in
time (`timing.stability`), or of its timed batches in arrival order where a record predates that.
A point either run calls unstable (its passes disagree) is said to be unstable, neither changed nor
unchanged, unless every pass of one run lies beyond every pass of the other by more than the
tolerance: then no state it showed explains the move, and it has changed.

Two figures of a point must both have moved, the same way: the median and the fast end (the p5
time). Other jobs on the machine only ever slow samples down, so on a shared machine the median
can move by 2x between identical runs while the fast end stays put; a change of code or
settings moves both.

With repetitions, a point whose jobs of one side lie further apart than the tolerance, while the
two sides' ranges overlap, is not called changed when its medians moved: identical jobs read it in
different states on both sides, and the medians only count the jobs that drew each. It is said to
move between jobs (unstable). Sides whose jobs do not overlap at all have changed, however wide.

A point that would have changed is unstable instead where the worse run's own records say the
host got in the way of its passes: the hypervisor took 10% of the VM's CPU time or held a CPU for a
quarter of a pass, or other processes used a quarter of the node (`timing.host_activity`, the
rules of commatlas.analysis.host_activity). The verdict says what the host did. Only the worse
run's host can explain a move, and a run whose host stayed quiet is judged as before.

A changed point whose movement other code measured too (its bare reference loop, the OSU method;
for a reference, the benchmark it checks: `witnesses`) says whether that measurement moved alike
(the machine or the library ran differently between the runs) or held (the move lies in the loop
that timed the point, or its job). The verdict stays changed: the figure did change.

Parameters that hold one value over a whole benchmark in each run but differ between the runs
(`--threads 1` against the default) are settings of the run: points are matched across them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from itertools import combinations
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from commatlas.analysis.answers import compute_answers
from commatlas.analysis.host_activity import PLACEMENT_EXPLAINS, host_busy, interference, pair_move, placement_moved
from commatlas.analysis.process_state import level_explains
from commatlas.analysis.repeats import side_unstable
from commatlas.analysis.ranking import ratio, value_of
from commatlas.errors import UsageError
from commatlas.io.engine import normalise_mpi_name
from commatlas.io.points import PointKey, point_key
from commatlas.io.results import Result, Run, load_run
from commatlas.units import format_ratio, format_size

KiB, MiB = 1 << 10, 1 << 20
# A tolerance needs this many points (or pairs of repetitions) in its range; fewer: the points of
# the same metric at every size, then every point of the runs.
MIN_POINTS = 8
# ... and one taken from two single runs' moves wants this many before a range gets its own: from
# fewer, the 99% quantile is the range's largest mover and the far-out fence stands on the few
# points that set the quartiles, so about one point a range is called changed whatever happened.
# A 2-core VM's ranges hold 8-25 points: on 18 identical pairs of one engine, judged by their own
# ranges 4.1% of the points were called changed and 6 pairs read below 95% "no change" (as many as
# chance leaves at that rate); by the metric's points at every size (every point's, where a metric
# has fewer), 2.1% and none, and a uniform 15% slowdown, whose ranges then move as a whole with
# their pool, was flagged at 60-97% of the points, against 56-93% (results/cpu-2core/identical-37;
# 8 more pairs, measured after the rule was chosen: 97.5% "no change", none below 95%, 81-97%
# flagged). The GPU machines' ranges hold 71-183 points. Where no pool reaches it, MIN_POINTS
# picks the pool as before.
RANGE_MIN_POINTS = 30
REPEAT_QUANTILE = 0.95
REPEAT_SOURCE = "pairs of repetitions"  # how a tolerance measured from repetitions says so
# Over the points of two runs, this share of them may lie further from the range's common move
# than its tolerance: at most 1% of the points of two identical runs are called changed this way.
RUNS_QUANTILE = 0.99
# ... and no tolerance lies inside Tukey's far-out fence of the range's moves (Q3 + 3 IQR): a range
# of fewer than 1 / (1 - RUNS_QUANTILE) points has no 99% quantile of its own, and its largest mover
# would lie beyond an interpolated one by construction; only a move that stands out from the range's
# bulk is a change there.
FAR_OUT_IQR = 3.0
# A range moved as a whole when the sign test over its points says so at this level, and the
# common move is this many times the typical point's distance from it and this share of the
# distance's SHIFT_QUANTILE (the points' spread around the move; at RUNS_QUANTILE's wider 99%, a
# uniform 15% slowdown of a 4x H200 run moved 3 of its 5 ranges as a whole, not 5, and 309 points
# were called changed, not 561).
SHIFT_P = 0.01
SHIFT_OVER_TYPICAL = 2.0
SHIFT_OF_TOLERANCE = 0.5
SHIFT_QUANTILE = 0.975
# A benchmark whose median move lies this far from the other benchmarks' (modified z-score) moved
# apart as a whole: a change of its own, left out of the range's tolerance so that it cannot hide.
OUTLIER_Z = 3.5
APART_MIN_POINTS = 4
SHIFT_MIN_POINTS = 12
# Meta fields that decide whether two runs are comparable at all.
META_FIELDS = ("commatlas_version", "engine", "topology.gpus", "environment", "options", "launcher")


@dataclass(frozen=True)
class Band:
    """Points of one metric within one size range, which share one tolerance."""

    metric: str
    min_bytes: int
    max_bytes: int | None  # exclusive; None: no upper end

    def holds(self, metric: str, size: int | None) -> bool:
        size = size or 0
        return metric == self.metric and size >= self.min_bytes and (self.max_bytes is None or size < self.max_bytes)

    @property
    def sizes(self) -> str:
        if self.max_bytes is None:
            return f"≥ {format_size(self.min_bytes)}"
        if self.min_bytes <= 1:
            return f"< {format_size(self.max_bytes)}"
        return f"{format_size(self.min_bytes)} – {format_size(self.max_bytes)}"

    @property
    def label(self) -> str:
        return f"{self.metric} {self.sizes}"


# Size ranges whose points move alike between runs: cache-sized, around the DRAM/PCIe knee, large.
BANDS = (
    Band("bandwidth", 0, 64 * KiB),
    Band("bandwidth", 64 * KiB, 2 * MiB),
    Band("bandwidth", 2 * MiB, None),
    Band("latency", 0, 64 * KiB),
    Band("latency", 64 * KiB, None),
)


def amount(move: float, digits: int = 0) -> str:
    """A move for people: "12%" up to 100%, then a factor ("2.5x" for a move of +150%)."""
    return f"{move:.{digits}%}" if move < 1 else f"{1 + move:.3g}x"


def band_of(bands: Iterable[Band], metric: str, size: int | None) -> Band | None:
    return next((b for b in bands if b.holds(metric, size)), None)


@dataclass(frozen=True)
class Tolerance:
    """One range's tolerance and where it came from."""

    band: Band
    value: float        # |move| beyond which a point has changed
    measured_from: str  # "12 points", "40 pairs of repetitions", "every latency point (9)", ...
    shift: float = 0.0  # the range's common move (signed, as `signed_move`)
    shifted: bool = False  # the range moved as a whole (sign test and size)
    apart: tuple[str, ...] = ()  # benchmarks that moved apart as a whole, left out of the value
    # Of the points the value was taken from, how many lie beyond it by its own construction (a
    # pool several ranges share is counted at the first of them only): 1% of a large pool, and at
    # most one of a pool of fewer than 1 / (1 - RUNS_QUANTILE) points, whatever the machine did.
    beyond_by_design: int = 0

    @property
    def text(self) -> str:
        return tolerances_text([self])


def tolerances_text(tolerances: Iterable[Tolerance]) -> str:
    """The tolerances in words, one entry for neighbouring ranges of a metric that hold the same
    tolerance from the same pool ("bandwidth < 64 KiB, 64 KiB – 2 MiB and ≥ 2 MiB: ±26% (every
    bandwidth point, 51)") and the same common move: where the ranges share their metric's pool,
    the same words three times over say less."""
    groups: list[list[Tolerance]] = []
    for t in tolerances:
        last = groups[-1][-1] if groups else None
        if (last is not None and last.band.metric == t.band.metric and last.value == t.value
                and last.measured_from == t.measured_from and last.shifted == t.shifted
                and (not t.shifted or last.shift == t.shift)):
            groups[-1].append(t)
        else:
            groups.append([t])
    entries = []
    for group in groups:
        t = group[0]
        sizes = [g.band.sizes for g in group]
        ranges = ", ".join(sizes[:-1]) + " and " + sizes[-1] if len(sizes) > 1 else sizes[0]
        entry = f"{t.band.metric} {ranges}: ±{amount(t.value, 1)} ({t.measured_from})"
        if t.shifted:
            entry += f", moved as a whole by {t.shift:+.1%}"
        entries.append(entry)
    return "; ".join(entries)


@dataclass(frozen=True)
class Rule:
    """How "changed" was decided: which tolerances, and where they came from."""

    kind: str                  # "repeats" or "runs"
    tolerances: tuple[Tolerance, ...]
    text: str
    # With repetitions: every pair's deviation, by range and benchmark (what `without` re-pools).
    pairs: tuple[tuple[Band, str, float], ...] = ()

    def without(self, benchmark: str) -> Rule:
        """The rule that judges `benchmark`'s points: each range measured from repetitions takes its
        tolerance from the other benchmarks' pairs (the same metric's at every size, or every pair,
        where the range has too few), so a benchmark whose jobs fall in two states cannot widen the
        tolerance that judges it. On 2x H100, nccl.pingpong_launch in graph mode read 8.6 and 51 us
        in two jobs alone: with its pairs counted the latency range's tolerance came out at ±3.7x and
        its 29.8 against 8.5 us agreed. Its own spread still counts (`judge`'s `own`, `between_jobs`)."""
        if self.kind != "repeats" or all(name != benchmark for _, name, _ in self.pairs):
            return self
        others = [(band, d) for band, name, d in self.pairs if name != benchmark]
        tolerances = []
        for t in self.tolerances:
            if not t.measured_from.endswith(REPEAT_SOURCE):
                tolerances.append(t)
                continue
            for pool, words in (([d for band, d in others if band == t.band], REPEAT_SOURCE),
                                ([d for band, d in others if band.metric == t.band.metric],
                                 f"every {t.band.metric} point's {REPEAT_SOURCE}"),
                                ([d for _, d in others], f"every point's {REPEAT_SOURCE}")):
                if len(pool) >= MIN_POINTS:
                    tolerances.append(replace(t, value=float(np.quantile(pool, REPEAT_QUANTILE)),
                                              measured_from=f"{len(pool)} {words}, {benchmark}'s left out"))
                    break
            else:
                tolerances.append(t)  # too few pairs without its own: the range's tolerance stands
        return replace(self, tolerances=tuple(tolerances))

    def of(self, metric: str, size: int | None) -> Tolerance | None:
        return next((t for t in self.tolerances if t.band.holds(metric, size)), None)

    def tolerance(self, metric: str, size: int | None) -> float:
        t = self.of(metric, size)
        # A metric without a range (a new one): the widest tolerance of the runs is the safe side.
        return t.value if t else max((x.value for x in self.tolerances), default=math.inf)


@dataclass(frozen=True)
class Verdict:
    different: bool
    why: str
    unstable: bool = False  # a run calls the point unstable: neither changed nor unchanged
    # Changed by the range's tolerance alone (not its own spread, nor its range's common move):
    # what `RunComparison.tail_note` counts.
    by_range: bool = False


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
    key: PointKey | None = None  # the point both runs' figures were matched on
    # A changed point's independent witnesses (`witness_words`): "alike" when the same movement,
    # measured by other code, moved the same way; "held" when it did not; "mixed" when some of
    # several did; "" without one.
    witness: str = ""


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
    rule: Rule
    points: list[PointDelta] = field(default_factory=list)
    only_base: int = 0
    only_other: int = 0
    settings: list[str] = field(default_factory=list)  # "host.memcpy threads: 2 → 1"
    winners: list[WinnerChange] = field(default_factory=list)
    winners_note: str = ""  # why winners were not compared, when they were not

    @property
    def different(self) -> list[PointDelta]:
        return [p for p in self.points if p.verdict.different]

    @property
    def unstable(self) -> list[PointDelta]:
        return [p for p in self.points if p.verdict.unstable]

    @property
    def unchanged(self) -> list[PointDelta]:
        return [p for p in self.points if not p.verdict.different and not p.verdict.unstable]

    @property
    def whole_benchmark_note(self) -> str:
        """What the reader should know when changed points belong to a benchmark that moved apart
        as a whole: with one run on each side, a benchmark that moves from one job to the next
        (host MPI on the 2-core VM, managed-memory prefetch on 2x H100, each between identical
        runs) reads exactly as one that changed. Repetitions tell the two apart where they span
        the machine's moves: --repeat's passes are back-to-back jobs, and on the 2-core VM host MPI
        held one state through both passes of a run and another through the next run's
        (results/cpu-2core/compare-identical-2/repeat2), so the note asks for a later run too."""
        if self.rule.kind != "runs":
            return ""
        apart = {name for t in self.rule.tolerances for name in t.apart}
        moved = [p for p in self.different if p.benchmark in apart]
        if not moved:
            return ""
        names = ", ".join(sorted({p.benchmark for p in moved}))
        return (f"{len(moved)} of the changed points moved with their whole benchmark ({names}): one run on "
                f"each side cannot tell a benchmark that moves between jobs, or over minutes, from one that "
                f"changed; run each side again (later, or with --repeat 2) to see whether the move holds")

    @property
    def tail_note(self) -> str:
        """How many changed points only lie beyond their range's tolerance, against how many would
        between identical runs. A tolerance taken from the two runs' own points is their moves'
        RUNS_QUANTILE (or its far-out fence), so up to that share of a range's points lies beyond it
        whatever happened (at the 97.5% quantile, on the committed identical GPU pairs, 10-18 of
        about 600 points were changed this way, with 16-18 beyond by construction;
        results/cpu-2core/compare-quantile-35). A point there alone reads like a change and is as
        likely the tail; the moves that stand out from it are whole ranges and whole benchmarks,
        which have their own verdicts and notes."""
        if self.rule.kind != "runs":
            return ""
        apart = {name for t in self.rule.tolerances for name in t.apart}
        tail = [p for p in self.different if p.benchmark not in apart and p.verdict.by_range]
        if not tail:
            return ""
        pooled = sum(t.beyond_by_design for t in self.rule.tolerances)
        return (f"{len(tail)} of the changed points lie beyond their range's tolerance and nothing else; each "
                f"range's tolerance is the {RUNS_QUANTILE:.1%} quantile of its points' own moves (or their "
                f"far-out fence), which leaves about {pooled} of them beyond it by construction, even between "
                f"identical runs: one run a side cannot tell such a point from the noise's tail; run each side "
                f"again (later, or with --repeat 2) to see whether it holds")

    @property
    def witness_note(self) -> str:
        """How many changed points an independent measurement of the same movement confirms or
        contradicts: a benchmark's reference loop or OSU-method reference (`movement.reference_of`),
        or for a reference the benchmark it checks. A move the other code saw too is the machine's
        or the library's between the runs, not the loop that timed the point; one it did not see
        lies in that loop or in its job."""
        alike = [p for p in self.different if p.witness == "alike"]
        held = [p for p in self.different if p.witness == "held"]
        mixed = [p for p in self.different if p.witness == "mixed"]
        if not alike and not held and not mixed:
            return ""
        parts = []
        if alike:
            parts.append(f"{len(alike)} of the changed points moved alike with an independent measurement of the "
                         f"same movement (a reference loop or the OSU method): the machine or the library ran "
                         f"differently between the runs, not the loop that timed it")
        if held:
            parts.append(f"{len(held)} moved while {'its' if len(held) == 1 else 'their'} independent measurement "
                         f"held: the move lies in the loop that timed {'it' if len(held) == 1 else 'them'} or its job")
        if mixed:
            parts.append(f"{len(mixed)} moved alike with some of their independent measurements and not with "
                         f"others (each named in its verdict)")
        return "; ".join(parts)


# --- matching points ------------------------------------------------------------------------------



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


def group_points(results: list[Result], settings: dict[str, set[str]]) -> dict[PointKey, list[Result]]:
    """Verified results per point; one per --repeat pass."""
    groups: dict[PointKey, list[Result]] = {}
    for r in results:
        if r.verified_ok and math.isfinite(value_of(r)) and value_of(r) > 0:
            groups.setdefault(point_key(r, leave_out=settings.get(r.benchmark, set())), []).append(r)
    return groups


def witnesses(results: list[Result], settings: dict[str, set[str]]) -> dict[PointKey, set[PointKey]]:
    """Per point, the points that measure the same movement with other code: a benchmark's
    reference loops and OSU-method references (their records' `movement.reference_of`), and for a
    reference the benchmark it checks. Matched by movement, never by parameter names, as
    harness_check pairs them: the same operation, direction, both ends, size and ranks, and every
    choice the reference declares (`threads`, the MPI library)."""
    def identity(r: Result) -> tuple[Any, ...] | None:
        m = r.movement
        if m is None or m.source is None or m.target is None:
            return None
        return m.operation, m.direction, m.source, m.target, r.bytes, r.ranks

    checked: dict[tuple[Any, ...], list[Result]] = {}
    for r in results:
        ident = identity(r)
        if ident is not None and r.movement is not None and not r.movement.reference_of:
            checked.setdefault((r.benchmark, *ident), []).append(r)
    out: dict[PointKey, set[PointKey]] = {}
    for r in results:
        ident = identity(r)
        if ident is None or r.movement is None or not r.movement.reference_of:
            continue
        declared = r.movement.choices
        for c in checked.get((r.movement.reference_of, *ident), []):
            theirs = dict(c.movement.choices) if c.movement is not None else {}
            if all(theirs.get(name) == value for name, value in declared):
                a = point_key(c, leave_out=settings.get(c.benchmark, set()))
                b = point_key(r, leave_out=settings.get(r.benchmark, set()))
                out.setdefault(a, set()).add(b)
                out.setdefault(b, set()).add(a)
    return out


def witness_words(point: PointDelta, seen: list[PointDelta]) -> tuple[str, str]:
    """(kind, the words for the changed point's verdict) given the deltas of the points that
    measure the same movement with other code. A witness moved alike when it went the same way by
    at least half as much (in log terms), else it held. Kind: "alike" when every witness moved
    alike, "held" when none did, "mixed" otherwise (a bare loop in the same job moved, the OSU
    method in its own job held: the job's state)."""
    mine = math.log(point.improvement)
    words, kinds = "", set()
    for w in seen:
        theirs = math.log(w.improvement)
        alike = mine * theirs > 0 and abs(theirs) >= abs(mine) / 2
        kinds.add("alike" if alike else "held")
        words += f"; {w.benchmark}, the same movement by other code, {'moved alike' if alike else 'held'} " \
                 f"({format_ratio(w.ratio)})"
    return (kinds.pop() if len(kinds) == 1 else "mixed"), words


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


def signed_move(a: Figures, b: Figures) -> float:
    """How far a point moved by both figures, signed (as `relative_move` of the values): the
    smaller move when median and fast end moved the same way, 0 when they disagree (one of them
    is noise)."""
    m, f = relative_move(a.median, b.median), relative_move(a.fast, b.fast)
    if not (math.isfinite(m) and math.isfinite(f)):
        return m if math.isfinite(m) else 0.0
    if (m > 0) != (f > 0):
        return 0.0
    return m if abs(m) <= abs(f) else f


def moved(a: Figures, b: Figures) -> float:
    """How far a point moved by both figures, whichever way."""
    return abs(signed_move(a, b))


# --- what one run says about one point ------------------------------------------------------------

def batch_spread(r: Result) -> float:
    """max / min - 1 of the medians of the record's timed batches, in arrival order: the harness
    takes 16 samples, then doubles the total each batch (timing.batches); a reservoir keeps the
    arrival order, so its share of each batch stands for it. nan with fewer than two batches of
    4 samples."""
    samples = r.samples
    n, total = len(samples), max(r.timing.samples, len(samples))
    if n < 8:
        return math.nan
    bounds, end = [0], 16
    while end < total:
        bounds.append(round(end * n / total))
        end *= 2
    bounds.append(n)
    medians = [float(np.median(samples[i:j])) for i, j in zip(bounds, bounds[1:]) if j - i >= 4]
    medians = [m for m in medians if m > 0]
    return max(medians) / min(medians) - 1 if len(medians) >= 2 else math.nan


def median_interval(r: Result) -> float:
    """upper / lower - 1 of the distribution-free 95% interval of the median of the record's
    samples (order statistics x(k) and x(n+1-k), P(Bin(n, 1/2) < k) <= 2.5%, as the harness's
    precision); nan with fewer than 6 samples."""
    x = np.sort(r.samples[np.isfinite(r.samples)])
    n = len(x)
    if n < 6:
        return math.nan
    k, tail = 0, 0.0
    while True:  # the largest k whose tail stays within 2.5%
        tail += math.comb(n, k) / 2.0 ** n
        if tail > 0.025:
            break
        k += 1
    if k < 1 or x[k - 1] <= 0:
        return math.nan
    return float(x[n - k] / x[k - 1] - 1)


def own_spread(r: Result) -> float:
    """How far the point's figure is uncertain inside its own run: the larger of its median's 95%
    interval and how far its parts separated in time lie apart (its measurement and confirmation
    batch where the engine checked them, timing.stability; else its timed batches); 0 when the
    record cannot say."""
    modes = [m for m in r.stability_modes if m > 0 and math.isfinite(m)]
    spread = max(modes) / min(modes) - 1 if len(modes) >= 2 else batch_spread(r)
    return max((v for v in (spread, median_interval(r)) if math.isfinite(v)), default=0.0)


def is_unstable(results: list[Result]) -> bool:
    return any(r.stability == "unstable" for r in results)


def unstable_jobs_note(flagged: int, jobs: int, side: str) -> str:
    """What a verdict adds for the jobs of a side that did not repeat and were outvoted."""
    if flagged == 0 or side_unstable(flagged, jobs):
        return ""
    return f"; {flagged} of {jobs} jobs of {side} did not repeat their own batches"


# --- the rule -------------------------------------------------------------------------------------

Groups = dict[PointKey, list[Result]]


def repeat_deviations(groups: Iterable[tuple[PointKey, list[Result]]]) -> dict[Band, list[tuple[str, float]]]:
    """(benchmark, |a / b - 1|) for every pair of repetitions of one point, per range."""
    pooled: dict[Band, list[tuple[str, float]]] = {}
    for _, results in groups:
        repeats = {r.repeat for r in results}
        if len(results) < 2 or None in repeats or len(repeats) < len(results) or is_unstable(results):
            continue
        band = band_of(BANDS, results[0].metric, results[0].bytes)
        if band is None:
            continue
        figures = [center([r]) for r in results]
        pooled.setdefault(band, []).extend((results[0].benchmark, moved(a, b)) for a, b in combinations(figures, 2))
    return pooled


def sign_test_p(up: int, down: int) -> float:
    """Two-sided binomial sign test: how likely so many of the moves go one way by chance."""
    n, k = up + down, max(up, down)
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(k, n + 1)) / 2.0 ** n
    return min(1.0, 2 * tail)


def common_move(moves: list[float]) -> tuple[float, bool]:
    """The range's common move (the median of its points' signed moves) and whether the range moved
    as a whole: its points went one way (sign test) by more than twice their typical distance
    from the common move and by more than half the SHIFT_QUANTILE of that distance. Whether the
    whole machine moves between identical runs, one pair of runs cannot show: a few percent of
    common move (another job, a clock) is let pass."""
    if not moves:
        return 0.0, False
    x = np.asarray(moves)
    shift = float(np.median(x))
    typical = float(np.median(np.abs(x - shift)))
    tolerance = float(np.quantile(np.abs(x - shift), SHIFT_QUANTILE))
    shifted = (len(x) >= SHIFT_MIN_POINTS and shift != 0.0
               and sign_test_p(int(np.sum(x > 0)), int(np.sum(x < 0))) <= SHIFT_P
               and abs(shift) > SHIFT_OVER_TYPICAL * typical and abs(shift) > SHIFT_OF_TOLERANCE * tolerance)
    return shift, shifted


def apart(moves: dict[str, list[float]]) -> set[str]:
    """Benchmarks whose points moved together, away from the other benchmarks of the range: an
    outlier by the modified z-score of their median moves (Iglewicz and Hoaglin: |z| > 3.5, the
    mean absolute deviation standing in when the median one is 0)."""
    names = sorted(moves)
    if len(names) < 3:
        return set()
    # One or two points of a benchmark cannot show it moving as a whole.
    groups = {n for n in names if len(moves[n]) >= APART_MIN_POINTS}
    s = np.array([np.median(moves[n]) for n in names])
    center_, mad = float(np.median(s)), float(np.median(np.abs(s - np.median(s))))
    if mad > 0:
        z = 0.6745 * (s - center_) / mad
    else:
        mean_ad = float(np.mean(np.abs(s - center_)))
        if mean_ad == 0:
            return set()
        z = (s - center_) / (1.253314 * mean_ad)
    return {n for n, x in zip(names, z) if abs(x) > OUTLIER_Z and n in groups}


def oriented(move: float, metric: str) -> float:
    """A signed move (as `signed_move`) turned so that + is better: a bandwidth that rose, a latency
    that fell. Its own inverse."""
    return -move if metric == "latency" else move


def runs_tolerance(pool: list[float]) -> tuple[float, bool]:
    """The RUNS_QUANTILE of a range's |move - common move|, or its far-out fence when wider (and
    whether the fence set it)."""
    if not pool:
        return 0.0, False
    q1, q3 = np.quantile(pool, [0.25, 0.75])
    quantile, fence = float(np.quantile(pool, RUNS_QUANTILE)), float(q3 + FAR_OUT_IQR * (q3 - q1))
    return max(quantile, fence), fence > quantile


def runs_tolerances(moves: dict[Band, list[tuple[str, float]]]) -> list[Tolerance]:
    """Per range, from the two runs' own points: the RUNS_QUANTILE of |move - common move| (or their
    far-out fence, `runs_tolerance`) over the points of the benchmarks that did not move apart as a
    whole; over its metric's points at every size, or every point, where the range has fewer than
    RANGE_MIN_POINTS (such a range moved as a whole with that pool, where it did not on its own)."""
    pools: dict[Band, list[float]] = {}
    shifts: dict[Band, tuple[float, bool]] = {}
    left_out: dict[Band, set[str]] = {}
    # A benchmark's sizes fall into several ranges of one metric: whether it moved apart as a whole
    # is judged over all of them (four sizes of which two are below 64 KiB are still four).
    per_metric: dict[str, dict[str, list[float]]] = {}
    for band, x in moves.items():
        for name, m in x:
            per_metric.setdefault(band.metric, {}).setdefault(name, []).append(m)
    apart_in_metric = {metric: apart(by_benchmark) for metric, by_benchmark in per_metric.items()}
    for band, x in moves.items():
        shifts[band] = common_move([m for _, m in x])
        by_benchmark: dict[str, list[float]] = {}
        for name, m in x:
            by_benchmark.setdefault(name, []).append(m)
        left_out[band] = apart(by_benchmark) | {n for n in apart_in_metric[band.metric] if n in by_benchmark}
        shift = shifts[band][0]
        pools[band] = [abs(m - shift) for name, m in x if name not in left_out[band]]
    # A range whose own moves are too wide to judge by (TOO_WIDE) lends them to no other: its points
    # are "too much to tell" whatever pool judges them, and pooled they would make every range so.
    # Beside each pool, its points' moves themselves, turned so that + is better whatever the metric
    # (`oriented`): a range judged by a pool also moved as a whole, or did not, with that pool.
    by_metric: dict[str, list[float]] = {}
    moved_by_metric: dict[str, list[float]] = {}
    for band, pool in pools.items():
        if len(pool) < MIN_POINTS or runs_tolerance(pool)[0] <= TOO_WIDE:
            by_metric.setdefault(band.metric, []).extend(pool)
            moved_by_metric.setdefault(band.metric, []).extend(oriented(m, band.metric) for _, m in moves[band])
    by_metric = {band.metric: by_metric.get(band.metric, []) for band in pools}
    moved_by_metric = {band.metric: moved_by_metric.get(band.metric, []) for band in pools}
    every = [v for x in by_metric.values() for v in x]
    moved_every = [m for x in moved_by_metric.values() for m in x]
    out = []
    counted: set[str] = set()  # the shared pools already counted in `beyond_by_design`
    for band, own in pools.items():
        # (pool, its moves, its words, which shared pool it is): the range's own, its metric's,
        # every point's; the first with RANGE_MIN_POINTS, else the first with MIN_POINTS.
        candidates = ((own, None, f"{len(own)} points", ""),
                      (by_metric[band.metric], moved_by_metric[band.metric],
                       f"every {band.metric} point, {len(by_metric[band.metric])}", band.metric),
                      (every, moved_every, f"every point, {len(every)}", "every"))
        pool, moved_with, source, shared = next(
            (c for least in (RANGE_MIN_POINTS, MIN_POINTS) for c in candidates if len(c[0]) >= least),
            ([], None, f"{len(every)} points: too few, the points' own spread only", ""))
        if moved_with is not None and not shifts[band][1]:
            # Too few points to move as a whole on their own (SHIFT_MIN_POINTS), or scattered too
            # widely: the range moved with its pool where the pool moved as a whole. A range that
            # did on its own keeps its own move.
            shift, shifted = common_move(moved_with)
            if shifted:
                shifts[band] = (oriented(shift, band.metric), True)
        value, fenced = runs_tolerance(pool)
        if fenced:
            source += ", their far-out fence"
        if left_out[band]:
            source += "; left out, moved apart as a whole: " + ", ".join(sorted(left_out[band]))
        beyond = 0 if shared in counted else sum(1 for v in pool if v > value)
        if shared:
            counted.add(shared)
        out.append(Tolerance(band, value, source, *shifts[band], tuple(sorted(left_out[band])), beyond))
    return out


def choose_rule(base: Groups, other: Groups) -> Rule:
    moves: dict[Band, list[tuple[str, float]]] = {}
    placed: dict[Band, list[tuple[str, float]]] = {}  # where the host had put the job's CPUs apart
    for key in sorted(set(base) & set(other), key=str):
        a, b = base[key], other[key]
        band = band_of(BANDS, a[0].metric, key[3])
        if band is None or is_unstable(a + b):
            continue
        # A move the host made (host_moved_cpus) is the machine's: counted here, it would widen the
        # tolerance every other point is judged by, and pass as a detection (2-core VM, runs whose
        # MPI job moved: 11-19 of the 16-27 points a planted 15% slowdown "flagged" were these).
        apart_cpus = placement_moved(a, b, ("", ""))
        (placed if apart_cpus else moves).setdefault(band, []).append((key[0], signed_move(center(a), center(b))))
    # Where the host moved every point's CPUs no range is left (host_moved_cpus then says so).
    n_placed = sum(map(len, placed.values()))
    left_out = (f" ({n_placed} point{'s' if n_placed != 1 else ''} left out: the host had put the job's CPUs "
                "apart between the runs)" if n_placed else "")
    runs = {t.band: t for t in runs_tolerances(moves)}
    pooled = repeat_deviations([*base.items(), *other.items()])
    if not pooled and not runs and n_placed:
        return Rule("runs", (), f"none: the host had put the job's CPUs apart between the runs at every point that "
                                f"repeated in both ({n_placed}), so these runs show no variation of their own to tell "
                                "a change by")
    if not pooled:
        tolerances = [runs[b] for b in BANDS if b in runs]
        text = (f"run-to-run variation shown by these two runs: per metric and size range, the "
                f"{RUNS_QUANTILE:.1%} quantile of how far its points moved around the range's common move, or "
                f"their far-out fence (Q3 + 3 IQR) where wider "
                f"(a point that wandered more inside its own run keeps its own spread): "
                + tolerances_text(tolerances) + left_out)
        return Rule("runs", tuple(tolerances), text)
    tolerances = []
    for band in BANDS:
        pairs = [d for _, d in pooled.get(band, [])]
        if len(pairs) >= MIN_POINTS:
            r = runs.get(band)
            tolerances.append(Tolerance(band, float(np.quantile(pairs, REPEAT_QUANTILE)),
                                        f"{len(pairs)} {REPEAT_SOURCE}",
                                        r.shift if r else 0.0, r.shifted if r else False))
        elif band in runs:
            tolerances.append(runs[band])
    text = (f"run-to-run variation of the --repeat passes (the {REPEAT_QUANTILE:.0%} quantile of how far two "
            f"repetitions of one point differ; figures are medians over the repetitions; a range with too few "
            f"pairs: its points' moves between the runs; a benchmark is judged on the others' pairs): "
            + tolerances_text(tolerances))
    return Rule("repeats", tuple(tolerances), text,
                tuple((band, name, d) for band, x in pooled.items() for name, d in x))


# A tolerance wider than this (±5x) hides a change of several times in the machine's own variation
# (a loaded 2-core VM has shown ±100x): a point within it is not judged unchanged but unstable,
# as a point whose batches did not repeat is.
TOO_WIDE = 4.0
TOO_WIDE_WORDS = "too much to tell a change from noise"


def point_tolerance(metric: str, size: int | None, rule: Rule, own: float = 0.0) -> float:
    """The range's tolerance, or the point's own spread inside its runs when larger."""
    t = rule.of(metric, size)
    return max(t.value if t else rule.tolerance(metric, size), own)


def judge(base: Figures, other: Figures, metric: str, size: int | None, rule: Rule, own: float = 0.0) -> Verdict:
    """Changed when both figures moved beyond the range's tolerance (or the point's own spread
    inside its runs, when larger), or went with a range that moved as a whole."""
    t = rule.of(metric, size)
    tolerance = point_tolerance(metric, size, rule, own)
    by_range = t is not None and own <= t.value
    whose = "the range's" if by_range else "its own spread"
    move = signed_move(base, other)
    if abs(move) > tolerance:
        return Verdict(True, f"median and fast end moved ≥ {amount(abs(move))}, beyond ±{amount(tolerance)} ({whose})",
                       by_range=by_range)
    if t is not None and t.shifted and move * t.shift > 0 and abs(move) >= abs(t.shift) / 2:
        return Verdict(True, f"moved {abs(move):.0%} with its whole range ({t.band.label}: {t.shift:+.0%})")
    if tolerance > TOO_WIDE:
        return Verdict(False, f"the runs vary by ±{amount(tolerance)} here ({whose}): {TOO_WIDE_WORDS}", unstable=True)
    median = abs(relative_move(base.median, other.median))
    if median > tolerance:
        fast = abs(relative_move(base.fast, other.fast))
        return Verdict(False, f"median moved {amount(median)}, the fast end {amount(fast)}: noise")
    return Verdict(False, f"within ±{amount(tolerance)}")


# Below this chance, jobs that vary and lie apart differ even by a gap narrower than their spread:
# 4 rounds of check-order in order (5 and 4 jobs) split that way by chance in 1.6% of checks.
SPLIT_CHANCE = 0.05


def between_jobs(a: list[Result], b: list[Result], tolerance: float) -> tuple[bool, str]:
    """For a point whose medians moved beyond the tolerance: whether it is to be called unstable
    rather than changed, and what to add to its verdict ("" when its jobs do not vary).

    When the repetitions (jobs) of a side lie further apart than the tolerance and the two sides'
    ranges overlap, identical jobs read the point in different states on both sides, and which
    median each side gets only says how many of its jobs drew each (2x H100: NCCL's 8 B ping-pong
    read 7.3 or 10-11.6 us from one identical job to the next, in the run's order and alone
    alike): unstable. Where every job of one side lies beyond every job of the other, by a gap
    wider than the jobs' own spread, no state the jobs showed reaches the other side: the sides
    differ, and that is how an order dependence shows. Jobs that vary also fall apart by chance,
    in 2 of the C(n+m, n) ways n and m jobs can be split (2/35, 5.7%, for 4 and 3), and then
    mostly by a gap narrower than their spread: that split is called different only where chance
    makes it rarer than SPLIT_CHANCE, unstable otherwise. (2x H100: a small copy's latency reads
    about 7.2 or 8.1 us from one fresh process to the next; 3 rounds of check-order put the run's
    4 jobs at 6.66-6.73 us and 3 jobs alone at 6.94-8.43, a 3% gap against a 21% spread, and 5
    rounds on another machine found all 12 of those points agreeing.)"""
    va, vb = [value_of(r) for r in a], [value_of(r) for r in b]
    if len(va) + len(vb) < 3 or min(va + vb) <= 0:
        return False, ""
    spread = max(max(v) / min(v) - 1 for v in (va, vb))
    if spread <= tolerance:
        return False, ""
    sides = f"{min(va):.4g}-{max(va):.4g} on one side and {min(vb):.4g}-{max(vb):.4g} on the other ({len(va)} and {len(vb)} jobs"
    if min(vb) > max(va) or min(va) > max(vb):
        gap = max(min(vb) / max(va), min(va) / max(vb)) - 1
        chance = 2 / math.comb(len(va) + len(vb), len(va))
        by_chance = f"jobs that vary fall apart like this by chance in {chance:.1%} of checks"
        if gap > spread or chance < SPLIT_CHANCE:
            return False, (f"; its jobs vary (spread {amount(spread)}) but lie apart, {sides}, a gap of "
                           f"{amount(gap)}): {by_chance}, more repetitions tell")
        return True, (f"moves between jobs: its jobs vary (spread {amount(spread)}) and lie apart by less, {sides}, "
                      f"a gap of {amount(gap)}): {by_chance}, more repetitions tell")
    return True, (f"moves between jobs: its jobs read {sides}, ranges that overlap, "
                  f"spread {amount(spread)} beyond ±{amount(tolerance)})")


def host_interfered(verdict: Verdict, worse: list[Result], side: str) -> Verdict:
    """A changed point whose worse side's records say the machine got in the way of its passes
    (steal, a held CPU, other processes: commatlas.analysis.host_activity) is unstable, not
    changed: the runs themselves show why it moved, and it is not the tool or the settings. The
    verdict says what the host did. A point on a host that left it alone keeps its verdict."""
    words = next((w for w in map(interference, worse) if w), None)
    if not words:
        return verdict
    return Verdict(False, f"worse in {side}, where the host got in the way: {words} "
                          f"(moved: {verdict.why})", unstable=True)


def host_moved_cpus(verdict: Verdict, a: list[Result], b: list[Result], rule: Rule) -> Verdict:
    """A changed point whose two runs' CPU-pair readings lie apart (the host had put the job's
    CPUs elsewhere: commatlas.analysis.host_activity.placement_moved) is unstable, not changed:
    the runs show the machine itself moved under it. A point measured where the host left the
    CPUs keeps its verdict, so a slowdown of the tool or of a setting is still flagged. Where
    the host moved every point (the rule has no range left), none can be judged: a 15% slowdown
    would hide among the machine's 3-6x moves, and "no change" would say what the runs cannot."""
    if not verdict.different and (rule.tolerances or not verdict.unstable):
        return verdict
    words = placement_moved(a, b, ("the baseline", "the other run"))
    if not words:
        return verdict
    # A placement explains a move of the size it made, not more (host_activity.PLACEMENT_EXPLAINS).
    pair, fa, fb = pair_move(a, b), center(a).median, center(b).median
    move = max(fa / fb, fb / fa) if fa > 0 and fb > 0 else math.inf
    if pair is not None and move > PLACEMENT_EXPLAINS * pair:
        beyond = (f"moved {move:.3g}x, more than {PLACEMENT_EXPLAINS:g}x as far as its CPU pair "
                  f"({pair:.2g}x): more than the host's placement of the CPUs explains")
        return (Verdict(True, f"{verdict.why}; {beyond}") if verdict.different
                else Verdict(True, f"{beyond} ({words})"))
    if not rule.tolerances:
        return Verdict(False, f"{words}, as at every point judged: these runs show no variation of their own "
                              "to tell a change by", unstable=True)
    return Verdict(False, f"{words} (moved: {verdict.why})", unstable=True)


def process_moved(verdict: Verdict, a: list[Result], b: list[Result]) -> Verdict:
    """A changed point whose paying ranks copied at another level in the other job, the way the
    figure moved (commatlas.analysis.process_state), is unstable, not changed: the machine copied
    at another speed under it. A point whose ranks kept their level keeps its verdict, so a
    slowdown of the tool is still flagged there."""
    if not verdict.different:
        return verdict
    words = level_explains(a, b, center(a).median, center(b).median, a[0].metric, ("the baseline", "the other run"))
    return Verdict(False, f"{words} (moved: {verdict.why})", unstable=True) if words else verdict


def passes(results: list[Result]) -> list[float]:
    """Every pass a side's records measured, seconds per op: each record's measurement and
    confirmation medians (timing.stability), or its one median where it has none."""
    out = []
    for r in results:
        modes = [m for m in r.stability_modes if m > 0 and math.isfinite(m)]
        out += modes or ([r.stats.median_s] if r.stats.median_s > 0 else [])
    return out


def passes_apart(a: list[Result], b: list[Result], tolerance: float) -> str:
    """For a point a run calls unstable: what to say when every pass of one side lies beyond every
    pass of the other by more than the tolerance, and its median and fast end moved beyond it too
    ("" otherwise). No state the point showed inside either run reaches the other side's, so its
    instability cannot explain the move: it changed (a 100x slowdown planted on a point whose
    batches did not repeat was called unstable before). The fast end keeps the rule every point
    has: a busy neighbour slows the median of every pass, never the fastest samples."""
    pa, pb = passes(a), passes(b)
    if not pa or not pb or tolerance > TOO_WIDE:
        return ""
    gap = max(min(pb) / max(pa), min(pa) / max(pb)) - 1
    if gap <= tolerance or abs(signed_move(center(a), center(b))) <= tolerance:
        return ""
    return f"unstable in {unstable_in(a, b)}, but its passes lie {amount(gap)} apart, beyond ±{amount(tolerance)}"


def unstable_in(a: list[Result], b: list[Result]) -> str:
    where = [name for name, rs in (("the baseline", a), ("the other run", b))
             if side_unstable(sum(r.stability == "unstable" for r in rs), len(rs))]
    return "both runs" if len(where) == 2 else "".join(where)


def outvoted(a: list[Result], b: list[Result]) -> str:
    return "".join(unstable_jobs_note(sum(r.stability == "unstable" for r in rs), len(rs), name)
                   for name, rs in (("the baseline", a), ("the other run", b)))


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
    where, wanted = text.rsplit("@", 1)
    run = load_run(where)
    names = {r.mpi_library for r in run.results if r.mpi_library}

    def matches(label: str) -> bool:
        name = label.rsplit(" ", 1)[0]
        return normalise_mpi_name(wanted) in (normalise_mpi_name(label), normalise_mpi_name(name))

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
    rules: dict[str, Rule] = {}
    for key, results in groups_b.items():
        a = groups_a.get(key)
        if a is None:
            out.only_other += 1
            continue
        r = results[0]
        rule = rules.setdefault(r.benchmark, out.rule.without(r.benchmark))
        fa, fb = center(a), center(results)
        va, vb = fa.median, fb.median
        ratio = vb / va
        improvement = ratio if r.metric == "bandwidth" else 1 / ratio
        variant = ", ".join([f"{k}={v}" for k, v in key[1]] + ([f"{r.ranks} ranks"] if r.ranks > 1 else []))
        where = unstable_in(a, results)
        worse, worse_name = (a, "the baseline") if improvement > 1 else (results, "the other run")
        if where:
            apart = passes_apart(a, results, point_tolerance(r.metric, r.bytes, rule))
            verdict = (process_moved(host_moved_cpus(host_interfered(Verdict(True, apart), worse, worse_name), a,
                                                     results, rule), a, results)
                       if apart else Verdict(False, f"unstable in {where}", unstable=True))
        else:
            # An outvoted job's own disagreement is not the point's spread: the jobs that repeated
            # set it (its median still counts among the jobs').
            own = max((own_spread(x) for x in a + results if x.stability != "unstable"), default=0.0)
            verdict = judge(fa, fb, r.metric, r.bytes, rule, own)
            if verdict.different:
                unstable, words = between_jobs(a, results, point_tolerance(r.metric, r.bytes, rule, own))
                verdict = Verdict(False, words, unstable=True) if unstable else replace(verdict, why=verdict.why + words)
            verdict = host_moved_cpus(host_interfered(verdict, worse, worse_name) if verdict.different else verdict,
                                      a, results, rule)
            verdict = process_moved(verdict, a, results)
            verdict = replace(verdict, why=verdict.why + outvoted(a, results))
        out.points.append(PointDelta(r.benchmark, variant or "-", r.bytes, r.metric, va, vb, ratio, improvement,
                                     verdict, key))
    out.only_base = len(set(groups_a) - set(groups_b))
    out.points = with_witnesses(out.points, witnesses(base.results, settings), witnesses(other.results, settings))
    out.winners, out.winners_note = compare_winners(base, other, out.rule)
    return out


def with_witnesses(points: list[PointDelta], base: dict[PointKey, set[PointKey]],
                   other: dict[PointKey, set[PointKey]]) -> list[PointDelta]:
    """Each changed point with its witness: a point both runs measured with other code for the same
    movement (`witnesses`), its move set beside the point's. The verdict itself stands: the point's
    figure did change; the witness says where."""
    by_key = {p.key: p for p in points if p.key is not None}
    out = []
    for p in points:
        seen = sorted((k for k in base.get(p.key, set()) & other.get(p.key, set()) if k in by_key), key=str)
        if p.verdict.different and seen:
            kind, words = witness_words(p, [by_key[k] for k in seen])
            p = replace(p, witness=kind, verdict=replace(p.verdict, why=p.verdict.why + words))
        out.append(p)
    return out


def settings_text(settings: dict[str, set[str]], base: list[Result], other: list[Result]) -> list[str]:
    def value(results: list[Result], benchmark: str, name: str) -> str:
        return next((v for r in results if r.benchmark == benchmark for k, v in r.params_key if k == name), "(absent)")

    return [f"{benchmark} {name}: {value(base, benchmark, name)} → {value(other, benchmark, name)}"
            for benchmark in sorted(settings) for name in sorted(settings[benchmark])]


def compare_winners(base: Run, other: Run, rule: Rule) -> tuple[list[WinnerChange], str]:
    """Cells of answers.json (commatlas.analysis.answers) whose winner changed; a change is
    beyond the noise when, in each run, its winner led the other run's winner by more than the
    tolerance of the points (the range's, or a point's own spread when larger). The two winners
    are set head to head on each run's own records: a cell's runner-up is the best of another
    mechanism, so two variants of one mechanism that swap places within 1% (GPU-initiated stores
    through peer access and through CUDA IPC on 2x H100) both lead it by 20% and would read as a
    clear change. Where a run lacks the other's winner, its runner-up margin stands in. A cell whose
    winners or runner-ups are unstable in either run, or had the host in the way of every pass
    (host_activity.host_busy), cannot say."""
    try:
        answers = [compute_answers(base), compute_answers(other)]
    except Exception as e:  # noqa: BLE001 - the point-by-point comparison stands without it
        return [], f"winners not compared: {type(e).__name__}: {e}"
    records = [{r.point: r for r in run.results if r.point} for run in (base, other)]
    cells = [{(m["key"], c["bin"]): (m, c) for m in a.get("movements", []) for c in m.get("cells", [])
              if c.get("winner")} for a in answers]
    changes = []
    for key in sorted(set(cells[0]) & set(cells[1])):
        (movement, a), (_, b) = cells[0][key], cells[1][key]
        wa, wb = winner_name(a["winner"]), winner_name(b["winner"])
        if wa == wb:
            continue
        winners = (a["winner"].get("point", ""), b["winner"].get("point", ""))
        head_to_head = [(records[side].get(winners[side]), records[side].get(winners[1 - side])) for side in (0, 1)]
        contenders = [(side, records[side].get((cell.get(role) or {}).get("point", "")))
                      for side, cell in enumerate((a, b)) for role in ("winner", "runner_up")]
        contenders += [(side, r) for side, pair in enumerate(head_to_head) for r in pair]
        unstable = sorted({("the baseline", "the other run")[side] for side, r in contenders
                           if r is not None and (is_unstable([r]) or host_busy(r))})
        tolerance = max([rule.tolerance(movement.get("metric", ""), b.get("bytes"))]
                        + [own_spread(r) for _, r in contenders if r is not None])
        metric = movement.get("metric", "")
        margins = [ratio(value_of(mine), value_of(theirs), metric) if mine is not None and theirs is not None
                   else (c.get("margin") or 1.0) for (mine, theirs), c in zip(head_to_head, (a, b))]
        clear = not unstable and all(m - 1 > tolerance for m in margins)
        if unstable:
            why = f"a contender is unstable, or held by a busy host, in {' and '.join(unstable)}"
        elif clear:
            why = f"each run's winner led by more than ±{amount(tolerance)}"
        else:
            why = f"a margin within ±{amount(tolerance)} (×{margins[0]:.2f}, ×{margins[1]:.2f}): a tie"
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
