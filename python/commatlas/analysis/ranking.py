"""Ranking the contenders of one movement: the figure that competes, which is better, by how
much, and the cells of the best-interface map (winner, runner-up, margin, whether the win is clear)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from commatlas.analysis.host_activity import host_busy, host_witness
from commatlas.analysis.keys import FIRST_BIN_MAX, Bin
from commatlas.io.results import Result


# --- contenders ------------------------------------------------------------------------------

@dataclass(frozen=True, order=True)
class Contender:
    """One way of doing a movement: mechanism, benchmark and every choice it was measured with."""

    mechanism: str
    benchmark: str
    choices: tuple[tuple[str, str], ...]

    @property
    def allocator(self) -> str:
        """The allocator(s) of the buffers, source first: "pinned → device", "device"."""
        c = dict(self.choices)
        names = [c[k] for k in ("from.allocator", "to.allocator") if c.get(k)]
        if len(names) == 2 and names[0] == names[1]:
            names = names[:1]
        return " → ".join(names) or "-"

    @property
    def library(self) -> str:
        """The MPI library that carried the bytes ("Open MPI 4.1.4"), "" where none did."""
        return dict(self.choices).get("mpi_library", "")

    def uses(self, allocator: str) -> bool:
        c = dict(self.choices)
        return allocator in (self.allocator, c.get("from.allocator"), c.get("to.allocator"))


def contender_of(r: Result) -> Contender:
    m = r.movement
    assert m is not None
    choices = []
    for side, e in (("from", m.source), ("to", m.target)):
        if e is not None:
            choices += [(f"{side}.allocator", e.allocator), (f"{side}.first_touch", e.first_touch)]
    choices = [(k, v) for k, v in choices if v] + list(m.choices)
    return Contender(m.mechanism, r.benchmark, tuple(choices))


def value_of(r: Result) -> float:
    """The figure that competes: bandwidth (bus bandwidth for collectives) or latency."""
    if r.metric != "bandwidth":
        return r.latency_us
    return r.collective.busbw_gbps if r.collective else r.bandwidth_gbps


def unit_of(r: Result) -> str:
    return ("GB/s busbw" if r.collective else "GB/s") if r.metric == "bandwidth" else "us"


def spread_of(r: Result) -> tuple[float, float]:
    """The p5–p95 range in the figure's own unit, low to high."""
    if r.metric == "bandwidth":
        factor = r.collective.bus_factor if r.collective else 1.0
        lo = factor * r.bytes_per_op / r.stats.p95_s / 1e9 if r.stats.p95_s > 0 else math.nan
        hi = factor * r.bytes_per_op / r.stats.p5_s / 1e9 if r.stats.p5_s > 0 else math.nan
        return lo, hi
    return r.stats.p5_s * 1e6, r.stats.p95_s * 1e6


def better(a: float, b: float, metric: str) -> bool:
    return a > b if metric == "bandwidth" else a < b


def ratio(winner: float, other: float, metric: str) -> float:
    if metric == "bandwidth":
        return winner / other if other > 0 else math.inf
    return other / winner if winner > 0 else math.inf


def peak_fraction(r: Result) -> float | None:
    """Of the movement's peak; never for a cache-resident figure (no DRAM/HBM peak applies)."""
    if r.movement and r.movement.cache_resident:
        return None
    if r.peak and math.isfinite(r.peak.fraction) and math.isfinite(r.peak.gbps) and r.peak.gbps > 0:
        return r.peak.fraction
    return None


# --- cells -----------------------------------------------------------------------------------

def _choice(c: Contender, r: Result) -> dict[str, Any]:
    lo, hi = spread_of(r)
    fraction = peak_fraction(r)
    return {"mechanism": c.mechanism, "benchmark": c.benchmark, "allocator": c.allocator,
            "choices": dict(c.choices), "value": value_of(r), "unit": unit_of(r),
            "spread": [lo if math.isfinite(lo) else None, hi if math.isfinite(hi) else None],
            "peak_fraction": fraction,
            "peak_gbps": r.peak.gbps if r.peak and fraction is not None else None,
            "residency": r.movement.residency_why or None if r.movement else None,
            "point": r.point or f"line {r.line}",
            # What one operation's time covers (a ping-pong's half round trip, a copy's launch and
            # synchronisation): contenders of a latency row are timed by different methods.
            "includes": r.latency_includes or None,
            # "unstable": a later batch of the same point disagreed (results.Result.stability).
            "stability": r.stability,
            "host_witness": host_witness(r) if r.stability == "unstable" else None,
            # The host got in the way of every pass of a figure that repeated: it repeated the
            # machine's state, so it is shown but, as an unstable one, not crowned.
            "host_busy": host_busy(r) if r.stability != "unstable" else None}


def _cell(b: Bin, contenders: dict[Contender, dict[int, Result]], metric: str) -> dict[str, Any] | None:
    low = b.min_bytes
    if metric != "latency" and b.max_bytes <= FIRST_BIN_MAX:
        # A bandwidth of a few bytes is a latency in disguise: bandwidth rows keep one column up
        # to 4 KiB (the size most contenders measured), as before the smallest messages had theirs.
        if b.min_bytes == 1:
            return None
        low = 1
    sizes: dict[int, int] = {}
    for points in contenders.values():
        for size in points:
            if low <= size <= b.max_bytes:
                sizes[size] = sizes.get(size, 0) + 1
    if not sizes:
        return None
    # The smallest bin shows its smallest size; the others the size most contenders measured.
    size = min(sizes) if b.min_bytes == 1 else max(sizes, key=lambda s: (sizes[s], s))
    here = [(c, p[size]) for c, p in contenders.items() if size in p]
    here.sort(key=lambda cr: value_of(cr[1]), reverse=metric == "bandwidth")
    memory = [(c, r) for c, r in here if not (r.movement and r.movement.cache_resident)]
    best: dict[str, float] = {}
    for c, r in memory:  # sorted best first: the first of each mechanism is its best
        best.setdefault(c.mechanism, value_of(r))
    cell: dict[str, Any] = {"bin": b.label, "bytes": size, "contenders": len(here), "winner": None,
                            "runner_up": None, "margin": None, "clear": None, "cache_resident": not memory,
                            "cache_figure": None, "best_by_mechanism": best}
    if not memory:
        cell["cache_figure"] = _choice(*here[0])
        return cell
    wc, wr = memory[0]
    cell["winner"] = _choice(wc, wr)
    runner = next(((c, r) for c, r in memory[1:]
                   if (c.mechanism, c.allocator, c.library) != (wc.mechanism, wc.allocator, wc.library)), None)
    if runner:
        rc, rr = runner
        cell["runner_up"] = _choice(rc, rr)
        cell["margin"] = ratio(value_of(wr), value_of(rr), metric)
        (w_lo, w_hi), (r_lo, r_hi) = spread_of(wr), spread_of(rr)
        cell["clear"] = bool(w_lo > r_hi) if metric == "bandwidth" else bool(w_hi < r_lo)
    # A winner whose own figure did not repeat is never a clear winner: which state the machine was
    # in decided it, so no finding or crossover builds on it. Nor is one the host got in the way of
    # in every pass: its passes agreed on the machine's state, not on the mechanism's figure.
    cell["unstable"] = [c["mechanism"] for c in (cell["winner"], cell["runner_up"]) if c and c["stability"] == "unstable"]
    cell["host_busy"] = [c["mechanism"] for c in (cell["winner"], cell["runner_up"]) if c and c["host_busy"]]
    if cell["unstable"] or cell["host_busy"]:
        cell["clear"] = False
    return cell


def crossovers(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Where the winning mechanism changes between two clear cells (ties cannot cross)."""
    clear = [c for c in cells if c["winner"] and c["clear"]]
    out = []
    for a, b in zip(clear, clear[1:]):
        if a["winner"]["mechanism"] != b["winner"]["mechanism"]:
            out.append({"below": a["winner"]["mechanism"], "above": b["winner"]["mechanism"],
                        "between_bytes": [a["bytes"], b["bytes"]]})
    return out


def fastest_allocator(cells: list[dict[str, Any]], of: str = "allocator") -> str | None:
    """The allocator (or with `of="library"`, the MPI library) that wins the most cells (the
    larger sizes break a tie)."""
    wins: dict[str, tuple[int, int]] = {}
    for i, c in enumerate(cells):
        name = c["winner"] and (c["winner"]["allocator"] if of == "allocator" else c["winner"]["choices"].get("mpi_library"))
        if name:
            n, _ = wins.get(name, (0, 0))
            wins[name] = (n + 1, i)
    return max(wins, key=lambda a: wins[a]) if wins else None


def ranked_cells(bins: list[Bin], contenders: dict[Contender, dict[int, Result]], metric: str) -> list[dict[str, Any]]:
    return [c for b in bins for c in [_cell(b, contenders, metric)] if c is not None]
