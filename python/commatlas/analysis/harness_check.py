"""The harness against its bare reference loops.

A reference loop (`reference.host_memcpy`, `reference.mpi_pingpong`, `reference.nccl_*`) times the
same operation as a harnessed benchmark with one clock pair and no harness, and its record says
which benchmark it checks (`movement.reference_of`). `harness_check(run)` sets each reference
point beside that benchmark's point of the same movement and size, and says whether the two agree:

- within 3% of the bare loop's figure (GB/s or us, the records' own metric), at every size;
- or, up to SMALL_BYTES where the bare loop's operation takes at least 1 us, within 1 us per
  operation: there a call's fixed cost (a kernel launch, an event pair) sets the time, and the bare
  loops' own medians move by about 1 us between identical runs (results/nvidia-h200-x2/
  nccl-overhead: 6.7-9.7 us at 8 B). Below 1 us per operation the allowance would be larger than
  the time itself, so only the 3% holds there.

Where the run has several passes (--repeat), each pair also carries the loops' own run-to-run
spread: the larger of the two loops' (max - min) / median over the passes. An operation that moves
more than 3% between passes of the same loop (a 32-thread memcpy on a VM host: 35 to 206 GB/s at
1 MiB between runs of 2x H200) cannot show the harness to 3%; a pair that misses the rule but lies
within that spread is counted apart, as such, never as agreeing. Each pair's verdict says which it
is (commatlas.analysis.agreement): agrees, the bare loop launch-bound (below), the host in the way,
the machine did not repeat, one pass (spread unknown), or the harness slower/faster than the bare
loop beyond the spread.

A bare loop enqueues its calls while its clock runs, so where the host takes as long to enqueue a
call as the GPU takes to run it, the loop times the host's launches (4 H100 ranks at 8 B: 12-14 us a
call against the harness's 6-9, the same in three runs). Its record keeps what the enqueueing took
(`timing.host_enqueue_s`); where that is at least LAUNCH_BOUND_SHARE of the loop's time per call
and the harness is the faster, the pair's verdict says the bare loop was launch-bound
(commatlas.analysis.agreement), which is not a cost of the harness.

The partner is found by movement, never by parameter names: same operation, direction,
mechanism, the same places at both ends (memory, GPU, NUMA node, rank, allocator, first touch)
and every choice the reference declares (`threads`, `launch`). A reference that does not place
its memory (NUMA node unknown) matches a variant placed on the host's only NUMA node, and the
pair says so. A reference point without a partner is listed with the reason, never dropped.

The OSU-method reference (`reference.osu_*`) has its own comparison (commatlas.analysis.osu) and is left out.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from commatlas.analysis import osu
from commatlas.analysis.agreement import Kind, Verdict, judge
from commatlas.analysis.host_activity import host_between
from commatlas.io.points import ParamsKey, SeriesKey, series_key
from commatlas.io.results import Endpoint, Movement, Result, Run
from commatlas.units import format_ratio, format_size, format_value

AGREE_FRACTION = 0.03
AGREE_US = 1.0
SMALL_BYTES = 64 * 1024
# A bare loop whose host spent at least this share of its time per call enqueueing that call had
# its GPU waiting on the host: the 20 calls of one event pair then take the enqueueing's time.
LAUNCH_BOUND_SHARE = 0.9
RULE = (f"agree within {AGREE_FRACTION:.0%} of the bare loop's figure; up to {format_size(SMALL_BYTES)}, "
        f"where the bare loop's operation takes {AGREE_US:g} us or more, within {AGREE_US:g} us per operation")
_OSU_REFERENCES = frozenset(benchmark for benchmark, _, _ in osu.TESTS.values())
_ENDPOINT_FIELDS = ("memory", "gpu", "numa", "rank", "node", "processor", "allocator", "first_touch")


@dataclass(frozen=True)
class Pair:
    """One size of a reference loop beside the harnessed benchmark it checks (medians over passes)."""

    reference: str  # the reference loop's benchmark key
    benchmark: str  # the harnessed benchmark (reference_of)
    variant: str  # the harnessed benchmark's parameters
    bytes: int
    metric: str  # bandwidth (GB/s) or latency (us)
    harnessed: float
    bare: float
    harnessed_us: float  # time per operation, both
    bare_us: float
    passes: int  # passes (--repeat) that measured both
    rule: str  # the bound that decided: "3%" or "1 us"
    agree: bool
    note: str = ""  # how the partner was matched, where it needed saying
    spread: float | None = None  # the loops' own run-to-run spread over the passes; None with one pass
    # What the host did to a pass of either loop, where its records show it taking the machine
    # (commatlas.analysis.host_activity.interference); "" where they do not.
    host: str = ""
    # The bare loop's host time to enqueue one call (timing.host_enqueue_s, median over passes),
    # None where its records do not say.
    bare_enqueue_us: float | None = None

    @property
    def launch_bound(self) -> str:
        """How the bare loop's host paced it, where enqueueing a call took LAUNCH_BOUND_SHARE of
        its time per call or more; "" otherwise."""
        e = self.bare_enqueue_us
        if e is None or not self.bare_us > 0 or e < LAUNCH_BOUND_SHARE * self.bare_us:
            return ""
        return (f"its host took {format_value(e, 'latency')} to enqueue each call of "
                f"{format_value(self.bare_us, 'latency')}, so the GPU waited on the launches")

    @property
    def verdict(self) -> Verdict:
        """Agrees, the machine did not repeat (the loops' own spread covers the difference), one
        pass (spread unknown), or the harness slower/faster than the bare loop beyond that spread."""
        d = self.difference
        slower = d > 0 if self.metric == "latency" else d < 0
        return judge(within_rule=self.agree, difference=d, spread=self.spread, slower=slower,
                     subject="the harness", reference="the bare loop",
                     rule=f"within {self.rule}" if self.rule != f"{AGREE_FRACTION:.0%}" else "", host=self.host,
                     launch_bound=self.launch_bound)

    @property
    def within_spread(self) -> bool:
        """Misses the rule, but by no more than the loops moved between their own passes."""
        return self.verdict.kind is Kind.DID_NOT_REPEAT

    @property
    def judgement(self) -> str:
        """The verdict in words: 'agrees', 'the machine did not repeat (...)', ..."""
        return self.verdict.text

    @property
    def ratio(self) -> float:
        """Harnessed over bare, in the metric's figure (> 1: the harness reads more GB/s, or more us)."""
        return self.harnessed / self.bare if self.bare > 0 else float("inf")

    @property
    def difference(self) -> float:
        return self.ratio - 1.0

    def describe_difference(self) -> str:
        # A ratio, as everywhere a figure is set against another (compare, findings, OSU);
        # percentages are kept for shares: of a peak, spreads and tolerances.
        return format_ratio(self.ratio)


@dataclass(frozen=True)
class Unpaired:
    """Reference points that have no harnessed partner, and why."""

    reference: str
    checks: str  # what it declares it checks ("" when it declares no movement)
    sizes: str
    points: int
    reason: str


@dataclass(frozen=True)
class HarnessCheck:
    pairs: list[Pair] = field(default_factory=list)
    unpaired: list[Unpaired] = field(default_factory=list)

    @property
    def agreeing(self) -> int:
        return sum(1 for p in self.pairs if p.agree)

    @property
    def within_spread(self) -> list[Pair]:
        return [p for p in self.pairs if p.within_spread]

    def summary_line(self) -> str | None:
        """'harness vs bare loops: 5 of 6 points agree (...); at 1 the machine did not repeat ...'."""
        return f"harness vs bare loops: {self.verdict()}" if self.pairs or self.unpaired else None

    def verdict(self, rule: bool = True) -> str:
        """What the pairs mean together: how many agree, how many the machine's own spread cannot
        judge, how many were one pass, and how many differ beyond the loops' spread (the worst)."""
        parts = [f"{self.agreeing} of {len(self.pairs)} points agree" + (
            f" (within {AGREE_FRACTION:.0%}, or {AGREE_US:g} us per operation up to {format_size(SMALL_BYTES)})"
            if rule else "")]
        spread = self.within_spread
        if spread:
            widest = max(spread, key=lambda p: p.spread or 0.0)
            parts.append(f"at {len(spread)} the machine did not repeat: the loops' own run-to-run spread "
                         f"(up to {widest.spread:.0%}: {widest.benchmark} at {format_size(widest.bytes)}) "
                         f"is wider than the difference")
        host = [p for p in self.pairs if p.verdict.kind is Kind.HOST]
        if host:
            first = host[0]
            parts.append(f"at {len(host)} the host got in the way (at {format_size(first.bytes)}: {first.host})")
        bound = [p for p in self.pairs if p.verdict.kind is Kind.LAUNCH_BOUND]
        if bound:
            first = bound[0]
            parts.append(f"at {len(bound)} the bare loop was launch-bound and cannot judge the harness "
                         f"({first.benchmark} at {format_size(first.bytes)}: {first.launch_bound})")
        one_pass = [p for p in self.pairs if p.verdict.kind is Kind.ONE_PASS]
        if one_pass:
            # On a VM host a memcpy or a 1-byte ping-pong can move 10-50% between passes: without
            # passes, a miss cannot be told from the loops' own noise.
            worst = max(one_pass, key=lambda p: abs(_log_ratio(p)))
            parts.append(f"{len(one_pass)} miss the rule in one pass: spread unknown, --repeat 3 measures it "
                         f"(furthest {_apart(worst)})")
        differing = [p for p in self.pairs if p.verdict.differs]
        if differing:
            worst = max(differing, key=lambda p: abs(_log_ratio(p)))
            parts.append(f"at {len(differing)} the harness is slower or faster than the bare loop beyond their "
                         f"spread (worst {_apart(worst)})")
        if self.unpaired:
            parts.append(f"{sum(u.points for u in self.unpaired)} reference point(s) without a partner")
        return "; ".join(parts)


def _apart(p: Pair) -> str:
    return (f"{p.benchmark} at {format_size(p.bytes)}: {format_value(p.harnessed, p.metric)} harnessed vs "
            f"{format_value(p.bare, p.metric)} bare ({p.describe_difference()})")


def harness_check(run: Run) -> HarnessCheck:
    """Every reference loop's points beside the harnessed benchmark they check."""
    numa_nodes = _numa_nodes(run.meta)
    references: dict[SeriesKey, list[Result]] = {}
    undeclared: dict[str, list[Result]] = {}
    for r in run.results:
        if r.benchmark in _OSU_REFERENCES:
            continue
        if r.movement is None:
            if r.category == "reference":
                undeclared.setdefault(r.benchmark, []).append(r)
        elif r.movement.reference_of:
            references.setdefault(series_key(r), []).append(r)
    by_benchmark: dict[str, list[Result]] = {}
    for r in run.results:
        if r.verified_ok and r.movement is not None and not r.movement.reference_of:
            by_benchmark.setdefault(r.benchmark, []).append(r)

    check = HarnessCheck()
    for name, results in sorted(undeclared.items()):
        check.unpaired.append(Unpaired(name, "", _sizes(results), len(results),
                                       "the record declares no movement (written before the engine declared "
                                       "movements): what it checks is not stated"))
    for (name, _, ranks), results in sorted(references.items()):
        _check_reference(run, name, ranks, results, by_benchmark, numa_nodes, check)
    check.pairs.sort(key=lambda p: (p.reference, p.variant, p.bytes))
    return check


def _check_reference(run: Run, name: str, ranks: int, results: list[Result], by_benchmark: dict[str, list[Result]],
                     numa_nodes: list[int] | None, check: HarnessCheck) -> None:
    movement = results[0].movement
    assert movement is not None
    target = movement.reference_of
    failed = [r for r in results if not r.verified_ok]
    if failed:
        check.unpaired.append(Unpaired(name, target, _sizes(failed), len(failed), "its data check did not pass"))
    results = [r for r in results if r.verified_ok]
    if not results:
        return
    env = _env(results[0])
    candidates = [c for c in by_benchmark.get(target, []) if c.ranks == ranks and _env(c) == env]
    if not candidates:
        skipped = next((s.reason for s in run.skips if s.benchmark == target), None)
        why = (f"{target} was skipped: {skipped}" if skipped
               else f"the run has no verified {target} result" + (f" on {ranks} ranks" if ranks > 1 else ""))
        check.unpaired.append(Unpaired(name, target, _sizes(results), len(results), why))
        return
    series: dict[ParamsKey, list[Result]] = {}
    for c in candidates:
        series.setdefault(c.params_key, []).append(c)
    matching: list[tuple[ParamsKey, list[Result], str]] = []
    nearest: tuple[ParamsKey, list[str]] | None = None
    for key, points in sorted(series.items()):
        differences, note = _differences(movement, points[0].movement, numa_nodes)
        if not differences:
            matching.append((key, points, note))
        elif nearest is None or len(differences) < len(nearest[1]):
            nearest = (key, differences)
    if nearest is not None and not matching:
        why = (f"no {target} variant has the same movement; the nearest ({_variant(nearest[0])}) "
               f"differs in {', '.join(nearest[1])}")
        check.unpaired.append(Unpaired(name, target, _sizes(results), len(results), why))
    for key, points, note in matching:
        harnessed = _by_size(points)
        missing: dict[str, list[int]] = {}
        for size, bare_passes in sorted(_by_size(results).items()):
            partner = harnessed.get(size, {})
            passes = sorted(set(bare_passes) & set(partner), key=repr)
            if passes:
                check.pairs.append(_pair(name, target, _variant(key), size, [partner[p] for p in passes],
                                         [bare_passes[p] for p in passes], note))
            elif partner:
                missing.setdefault(f"{target} ({_variant(key)}) measured this size only in other passes (--repeat)",
                                   []).append(size)
            else:
                missing.setdefault(f"{target} ({_variant(key)}) did not measure this size (it measured "
                                   f"{', '.join(format_size(s) for s in sorted(harnessed))})", []).append(size)
        for why, sizes in missing.items():
            check.unpaired.append(Unpaired(name, target, ", ".join(format_size(s) for s in sizes), len(sizes), why))


def _pair(name: str, target: str, variant: str, size: int, harnessed: list[Result], bare: list[Result],
          note: str) -> Pair:
    metric = bare[0].metric if bare[0].metric == harnessed[0].metric else "latency"
    h, b = _median(harnessed, metric), _median(bare, metric)
    h_us, b_us = _median(harnessed, "latency"), _median(bare, "latency")
    within_fraction = b > 0 and abs(h - b) / b <= AGREE_FRACTION
    small = size <= SMALL_BYTES and b_us >= AGREE_US
    within_time = small and abs(h_us - b_us) <= AGREE_US
    rule = f"{AGREE_US:g} us" if small and not within_fraction else f"{AGREE_FRACTION:.0%}"
    spread = max(_spread(harnessed, metric), _spread(bare, metric)) if len(bare) > 1 else None
    host = host_between(harnessed, bare, h, b, ("the harness's passes", "the bare loop's"))
    enqueue = [p.host_enqueue_s * 1e6 for p in bare if p.host_enqueue_s is not None]
    return Pair(name, target, variant, size, metric, h, b, h_us, b_us, len(bare), rule,
                bool(within_fraction or within_time), note, spread, host,
                statistics.median(enqueue) if len(enqueue) == len(bare) else None)


def _figure(point: Result, metric: str) -> float:
    return point.bandwidth_gbps if metric == "bandwidth" else point.latency_us


def _median(points: list[Result], metric: str) -> float:
    return statistics.median(_figure(p, metric) for p in points)


def _spread(points: list[Result], metric: str) -> float:
    """(max - min) / median of one loop's figures over the passes."""
    figures = [_figure(p, metric) for p in points]
    middle = statistics.median(figures)
    return (max(figures) - min(figures)) / middle if middle > 0 else 0.0


def _log_ratio(p: Pair) -> float:
    return math.log(p.ratio) if 0 < p.ratio < float("inf") else float("inf")


def _differences(ref: Movement, other: Movement | None, numa_nodes: list[int] | None) -> tuple[list[str], str]:
    """What differs between the reference's movement and a harnessed one (empty: the same), and a
    note on how a difference that is no difference was read."""
    if other is None:
        return ["movement (none declared)"], ""
    out = [name for name in ("operation", "direction", "mechanism", "same_node", "participants")
           if getattr(ref, name) != getattr(other, name)]
    notes: set[str] = set()
    ends = (("from", ref.source, other.source), ("to", ref.target, other.target), ("by", ref.by, other.by))
    for side, a, b in ends:
        out += [f"{side}.{d}" for d in _endpoint_differences(a, b, numa_nodes, notes)]
    theirs = dict(other.choices)
    out += [f"choices.{k} ({v} vs {theirs.get(k, 'absent')})" for k, v in ref.choices if theirs.get(k) != v]
    note = ""
    if notes and not out:
        nodes = ", ".join(sorted(notes))
        note = f"placed on NUMA node {nodes}, the host's only node; the reference does not place its memory"
    return out, note


def _endpoint_differences(a: Endpoint | None, b: Endpoint | None, numa_nodes: list[int] | None,
                          notes: set[str]) -> list[str]:
    if a is None or b is None:
        return [] if a is b else ["endpoint"]
    out = []
    for name in _ENDPOINT_FIELDS:
        mine, theirs = getattr(a, name), getattr(b, name)
        if mine == theirs:
            continue
        if name == "numa" and mine is None and numa_nodes == [theirs]:
            notes.add(str(theirs))  # unplaced memory on a one-node host is on that node
            continue
        out.append(f"{name} ({_text(mine)} vs {_text(theirs)})")
    return out


def _text(value: Any) -> str:
    return "unplaced" if value is None else str(value)


def _numa_nodes(meta: dict[str, Any] | None) -> list[int] | None:
    nodes = (((meta or {}).get("engine") or {}).get("host") or {}).get("numa_nodes")
    return [int(n) for n in nodes] if isinstance(nodes, list) else None


def _env(r: Result) -> ParamsKey:
    return tuple((k, v) for k, v in r.params_key if k.startswith("env."))


def _by_size(points: list[Result]) -> dict[int, dict[int | None, Result]]:
    """Per size, per pass (--repeat), one result: the later record where a pass measured twice."""
    out: dict[int, dict[int | None, Result]] = {}
    for p in points:
        out.setdefault(p.bytes or 0, {})[p.repeat] = p
    return out


def _sizes(points: list[Result]) -> str:
    return ", ".join(format_size(s) for s in sorted({p.bytes or 0 for p in points}))


def _variant(key: ParamsKey) -> str:
    return ", ".join(f"{k}={v}" for k, v in key) or "-"
