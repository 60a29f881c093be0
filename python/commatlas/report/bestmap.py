"""The best-interface map: per path and size, which way of moving the data wins, and by how much.

Only series of one Path compete (same category, metric, endpoints, ranks, operation), so a
host-buffer MPI figure is never ranked against a device-buffer one. Better is higher bandwidth
for bandwidth series and lower latency for latency series. A win is "clear" when the winner's
p5–p95 range does not overlap the runner-up's: a margin inside the spread is a tie in practice,
and crossovers are only read between clear wins.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from commatlas.report.paths import PathKey, contender, path_of
from commatlas.results import Result, Series


@dataclass(frozen=True)
class Standing:
    size: int
    winner: str
    value: float
    runner_up: str
    runner_value: float
    margin: float  # winner over runner-up, ≥ 1 (how many times better)
    clear: bool
    contenders: int


@dataclass(frozen=True)
class Crossover:
    below: str  # wins at the smaller size
    above: str  # wins at the larger size
    between: tuple[int, int]
    at: float  # size where the two curves cross, interpolated in log-log; nan when not both measured


@dataclass
class PathMap:
    path: PathKey
    series: dict[str, Series]
    standings: list[Standing] = field(default_factory=list)
    crossovers: list[Crossover] = field(default_factory=list)

    def segments(self) -> list[tuple[int, int, str, float, float]]:
        """Runs of sizes with one winner: (first size, last size, winner, least, greatest margin)."""
        out: list[tuple[int, int, str, float, float]] = []
        for s in self.standings:
            if out and out[-1][2] == s.winner:
                a, _, w, lo, hi = out[-1]
                out[-1] = (a, s.size, w, min(lo, s.margin), max(hi, s.margin))
            else:
                out.append((s.size, s.size, s.winner, s.margin, s.margin))
        return out


def value_of(r: Result) -> float:
    return r.bandwidth_gbps if r.metric == "bandwidth" else r.latency_us


def spread_of(r: Result) -> tuple[float, float]:
    """The p5–p95 range in the record's own unit (GB/s or µs), low to high."""
    if r.metric == "bandwidth":
        lo = r.bytes_per_op / r.stats.p95_s / 1e9 if r.stats.p95_s > 0 else math.nan
        hi = r.bytes_per_op / r.stats.p5_s / 1e9 if r.stats.p5_s > 0 else math.nan
        return lo, hi
    return r.stats.p5_s * 1e6, r.stats.p95_s * 1e6


def better(a: float, b: float, metric: str) -> bool:
    return a > b if metric == "bandwidth" else a < b


def ratio(winner: float, other: float, metric: str) -> float:
    if metric == "bandwidth":
        return winner / other if other > 0 else math.inf
    return other / winner if winner > 0 else math.inf


def best_interface_map(all_series: list[Series]) -> list[PathMap]:
    paths: dict[PathKey, dict[str, Series]] = {}
    for s in all_series:
        if s.first.category == "reference":
            continue  # references calibrate the harness; they are not a way to move data
        paths.setdefault(path_of(s), {})[contender(s)] = s
    maps = [_map_path(p, c) for p, c in sorted(paths.items()) if len(c) >= 2]
    return [m for m in maps if m.standings]


def _map_path(path: PathKey, contenders: dict[str, Series]) -> PathMap:
    by_size: dict[int, dict[str, Result]] = {}
    for name, s in contenders.items():
        for r in s.points:
            if r.bytes is not None and math.isfinite(value_of(r)):
                by_size.setdefault(r.bytes, {})[name] = r
    out = PathMap(path, contenders)
    for size in sorted(by_size):
        here = by_size[size]
        if len(here) < 2:
            continue
        ranked = sorted(here, key=lambda n: value_of(here[n]), reverse=path.metric == "bandwidth")
        w, r = here[ranked[0]], here[ranked[1]]
        w_lo, w_hi = spread_of(w)
        r_lo, r_hi = spread_of(r)
        clear = (w_lo > r_hi) if path.metric == "bandwidth" else (w_hi < r_lo)
        out.standings.append(Standing(size, ranked[0], value_of(w), ranked[1], value_of(r),
                                      ratio(value_of(w), value_of(r), path.metric), clear, len(here)))
    # Only clear wins can cross over: a winner that flips inside the noise is a tie, not a crossover.
    clear = [s for s in out.standings if s.clear]
    for a, b in zip(clear, clear[1:]):
        if a.winner != b.winner:
            out.crossovers.append(Crossover(a.winner, b.winner, (a.size, b.size),
                                            _crossing(by_size, a.size, b.size, a.winner, b.winner)))
    return out


def _crossing(by_size: dict[int, dict[str, Result]], s0: int, s1: int, first: str, second: str) -> float:
    try:
        r0 = value_of(by_size[s0][first]) / value_of(by_size[s0][second])
        r1 = value_of(by_size[s1][first]) / value_of(by_size[s1][second])
    except (KeyError, ZeroDivisionError):
        return math.nan
    if r0 <= 0 or r1 <= 0 or r0 == r1 or s0 <= 0:
        return math.nan
    t = math.log(r0) / (math.log(r0) - math.log(r1))
    return math.exp(math.log(s0) + t * (math.log(s1) - math.log(s0)))


@dataclass
class MapGroup:
    """Placements of one kind whose winners agree size by size: shown once, the rest named."""

    first: PathMap
    segments: list[tuple[int, int, str, float, float]]  # margins span every placement of the group
    others: list[str] = field(default_factory=list)


def group_maps(maps: list[PathMap], kind_of) -> list[MapGroup]:
    groups: dict[tuple, MapGroup] = {}
    for m in maps:
        segments = m.segments()
        # Wins inside the noise are ties: they must not split placements that agree otherwise.
        key = (kind_of(m.path), tuple((s.size, s.winner if s.clear else "tie") for s in m.standings))
        g = groups.get(key)
        if g is None:
            groups[key] = MapGroup(m, segments)
            continue
        g.others.append(m.path.label())
        if [x[:3] for x in g.segments] == [x[:3] for x in segments]:
            g.segments = [(a, b, w, min(lo, lo2), max(hi, hi2))
                          for (a, b, w, lo, hi), (_, _, _, lo2, hi2) in zip(g.segments, segments)]
    return list(groups.values())
