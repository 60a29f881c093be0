"""Multi-node facts read from records: node pairs, soak time series and their noise measures, and
which ranks stopped answering when the watchdog ended a job.

Noise measures follow the Alps/Leonardo/LUMI study: against the quietest iteration (the minimum),
how much slower the median and the tail (99th percentile) are, and the share of iterations slower
than 1.5x the median.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

SLOW_FACTOR = 1.5  # an iteration above this times the median counts as disturbed


@dataclass(frozen=True)
class NoiseMeasures:
    iterations: int
    quiet_min_s: float
    median_s: float
    p99_s: float
    median_slowdown: float   # median / min
    tail_slowdown: float     # p99 / min
    share_slow: float        # share of iterations above SLOW_FACTOR x median


def noise_measures(samples_s: list[float] | np.ndarray) -> NoiseMeasures:
    x = np.asarray(samples_s, dtype=float)
    if x.size == 0 or not np.all(np.isfinite(x)) or x.min() <= 0:
        raise ValueError("noise measures need positive sample times")
    lo, med, p99 = float(x.min()), float(np.median(x)), float(np.percentile(x, 99))
    return NoiseMeasures(int(x.size), lo, med, p99, med / lo, p99 / lo, float(np.mean(x > SLOW_FACTOR * med)))


@dataclass(frozen=True)
class Soak:
    benchmark: str
    bytes: int
    ranks: int
    node_count: int
    start_s: list[float]
    samples_s: list[float]
    measures: NoiseMeasures


def soaks(records: list[dict[str, Any]]) -> list[Soak]:
    """Every soak result, ordered by benchmark, size and node count (the study's per-scale view)."""
    out = []
    for r in records:
        soak = r.get("soak") if r.get("type") == "result" else None
        if not soak:
            continue
        placement = r.get("placement") or {}
        out.append(Soak(r["benchmark"], int(r["bytes"]), int(r["ranks"]), int(placement.get("node_count", 1)),
                        list(soak["start_s"]), list(r["samples_s"]), noise_measures(r["samples_s"])))
    return sorted(out, key=lambda s: (s.benchmark, s.bytes, s.node_count, s.ranks))


def node_pair(record: dict[str, Any]) -> str:
    """"node0 ↔ node1" for a point between nodes, "node0" on one node, "" without placement."""
    nodes = (record.get("placement") or {}).get("nodes") or []
    distinct = list(dict.fromkeys(nodes))
    return " ↔ ".join(distinct)


def by_node_pair(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        if r.get("type") == "result" and r.get("placement"):
            groups[node_pair(r)].append(r)
    return dict(groups)


WATCHDOG_LINE = re.compile(r"watchdog: (?P<what>.+) on (?P<ranks>\d+) ranks? did not finish within (?P<limit>[\d.e+-]+) s "
                           r"\(seen by rank (?P<rank>\d+)(?: on (?P<node>[^,)]+))?(?P<late>, itself stopped)?")


@dataclass(frozen=True)
class Hang:
    what: str           # benchmark, variant and size
    ranks: int
    answered: dict[int, str]   # rank -> node, the ranks whose watchdog spoke
    stopped: list[int]  # ranks that said nothing: the ones that stopped answering

    def describe(self, nodes: list[str] | None = None) -> str:
        def named(r: int) -> str:
            return f"{r} ({nodes[r]})" if nodes and r < len(nodes) else str(r)
        stopped = ", ".join(named(r) for r in self.stopped) or "none (every rank waited)"
        return f"{self.what} hung on {self.ranks} ranks; ranks that stopped answering: {stopped}"


def hang_from_log(text: str) -> Hang | None:
    """The hang the watchdog lines in an engine log describe (the last point that hung)."""
    matches = [m for m in WATCHDOG_LINE.finditer(text)]
    if not matches:
        return None
    what = matches[-1]["what"]
    same = [m for m in matches if m["what"] == what]
    ranks = int(same[-1]["ranks"])
    # A rank whose guard ran late was stopped itself and spoke only once continued (launchers send
    # SIGCONT before they kill): it counts with the silent ones.
    answered = {int(m["rank"]): m["node"] or "" for m in same if not m["late"]}
    late = {int(m["rank"]) for m in same if m["late"]}
    return Hang(what, ranks, answered, [r for r in range(ranks) if r not in answered or r in late])


def parse_duration(text: str) -> float:
    """'90', '90s', '2m', '1h' -> seconds; ValueError otherwise."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|m|min|h)?\s*", text)
    if not m:
        raise ValueError(text)
    value = float(m[1]) * {"s": 1, None: 1, "m": 60, "min": 60, "h": 3600}[m[2]]
    if value <= 0:
        raise ValueError(text)
    return value
