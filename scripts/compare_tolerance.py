#!/usr/bin/env python3
"""How `commatlas compare` judges identical runs, and whether it still sees a planted slowdown.

    scripts/compare_tolerance.py [--without-cpu-pair] [--quantile Q] [--isolated F[,F...]]
                                 RUN_A1 RUN_B1 [RUN_A2 RUN_B2 ...]

Each pair is two identical runs made back to back (same command, same machine). For each pair it
prints how many points compare calls "no change", changed or unstable, its rule (each tolerance
and where it came from), the winner changes, and then the same comparison against a copy of the
second run with every time 15% longer (every sample and statistic scaled, as a real uniform
slowdown would leave them): how many of its points are called changed. The goal: at least 95%
"no change" on every identical pair, and the planted slowdown flagged.

Given several pairs, it ends with them pooled: how many of all their judged points were called
changed (the rule's false-alarm rate on this machine), how many pairs read below 95%, and how many
would by chance alone if every judged point were called changed independently at that rate. A
pair judges a few dozen points on a 2-core VM: at a 4% rate, one pair in three then holds four
changed points of 70 and reads below 95%, so a pair's share is mostly its draw, and the pooled
rate is what the rule does.

--without-cpu-pair judges as compare did before the CPU-pair witness: no two readings ever lie
apart (commatlas.analysis.host_activity.PLACEMENT_APART), so no move is laid to the host's
placement of the CPUs and every point counts towards the tolerance.

Each pair's changed points are counted by what made them changed: beyond the range's tolerance
(which the RUNS_QUANTILE of the range's own points sets, or their far-out fence, so that about 1% of
a large range is beyond it whatever the machine did), of a benchmark that moved apart as a whole,
beyond the point's own spread, or unstable in a run with passes that lie apart.

--quantile Q judges with RUNS_QUANTILE = Q instead of compare's own (the far-out fence still applies).
--isolated F,... plants a slowdown of F at one point the pair judged "no change", in turn at 20
points drawn at random: how many of them compare then calls changed. That is what a higher
quantile costs: fewer false alarms on identical runs, and fewer single points caught. (Planted at
1% of the points at once, they would set a range's 99% quantile themselves: that is the rule's
breakdown point, and a benchmark that moved as a whole is caught by another rule.)
"""
from __future__ import annotations

import copy
import math
import random
import signal
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

import commatlas.analysis.compare as compare  # noqa: E402
import commatlas.analysis.host_activity as host_activity  # noqa: E402
from commatlas.analysis.compare import (PointDelta, RunComparison, compare_two, group_points,  # noqa: E402
                                        run_settings)
from commatlas.io.results import ResultsError, Run, Stats, load_run  # noqa: E402

SLOWDOWN = 1.15


def slowed(run: Run, factor: float, points: set[str] | None = None) -> Run:
    """The run with every time `factor` times longer (only at `points`, the records' point ids,
    when given)."""
    out = copy.copy(run)
    results = []
    for r in run.results:
        if points is not None and r.point not in points:
            results.append(r)
            continue
        stats = Stats(*[v * factor if name.endswith("_s") else v for name, v in zip(Stats.__dataclass_fields__, (
            getattr(r.stats, f) for f in Stats.__dataclass_fields__))])
        collective = r.collective and replace(r.collective, algbw_gbps=r.collective.algbw_gbps / factor,
                                              busbw_gbps=r.collective.busbw_gbps / factor,
                                              goodput_gbps=r.collective.goodput_gbps / factor)
        results.append(replace(r, stats=stats, bandwidth_gbps=r.bandwidth_gbps / factor, latency_us=r.latency_us * factor,
                               collective=collective, _samples_at=None, _samples=np.asarray(r.samples) * factor))
    out.results = results
    return out


def cause(p: PointDelta, apart: set[str]) -> str:
    """What made a changed point changed (the verdict's own words, sorted into four kinds)."""
    if p.verdict.why.startswith("unstable in"):
        return "unstable in a run, passes apart"
    if p.benchmark in apart:
        return "its benchmark moved apart as a whole"
    if "(its own spread)" in p.verdict.why:
        return "beyond its own spread"
    if "with its whole range" in p.verdict.why:
        return "with its range, which moved as a whole"
    return "beyond the range's tolerance"


def isolated(a: Run, b: Run, c: RunComparison, factor: float, draws: int = 20) -> tuple[int, int]:
    """(flagged, planted): `draws` points drawn from those `c` called unchanged, each in turn alone
    `factor` times slower in `b`."""
    unchanged = [p for p in c.unchanged if p.key is not None]
    groups = group_points(b.results, run_settings(a.results, b.results))
    chosen = random.Random(0).sample(unchanged, min(len(unchanged), draws))
    flagged = 0
    for p in chosen:
        s = compare_two(a, slowed(b, factor, {r.point for r in groups[p.key]}))
        flagged += any(q.key == p.key and q.verdict.different for q in s.points)
    return flagged, len(chosen)


GOAL = 0.95  # "no change" on an identical pair


def below_goal_by_chance(judged: list[int], rate: float) -> float:
    """How many of pairs that judge these many points would read below GOAL "no change" if each
    point were called changed independently at `rate` (binomial): a pair of n points stays at GOAL
    with at most floor((1 - GOAL) n) changed."""
    def below(n: int) -> float:
        allowed = math.floor((1 - GOAL) * n + 1e-9)
        return 1 - sum(math.comb(n, k) * rate ** k * (1 - rate) ** (n - k) for k in range(allowed + 1))
    return sum(below(n) for n in judged)


def main(paths: list[str]) -> int:
    factors: list[float] = []
    try:
        while paths[:1] and paths[0].startswith("--"):
            if paths[0] == "--without-cpu-pair":
                host_activity.PLACEMENT_APART = math.inf
                paths = paths[1:]
            elif paths[0] == "--quantile" and len(paths) > 1 and 0.5 <= float(paths[1]) < 1:
                compare.RUNS_QUANTILE = float(paths[1])
                paths = paths[2:]
            elif paths[0] == "--isolated" and len(paths) > 1:
                factors = [float(f) for f in paths[1].split(",")]
                paths = paths[2:]
            else:
                raise ValueError(paths[0])
    except ValueError as e:
        print(f"compare_tolerance.py: bad option or value ({e}); see --help", file=sys.stderr)
        return 2
    if len(paths) < 2 or len(paths) % 2:
        print(__doc__, file=sys.stderr)
        return 2
    pooled: list[tuple[int, int]] = []  # (judged, changed) per pair
    for a_path, b_path in zip(paths[::2], paths[1::2]):
        try:
            a, b = load_run(a_path), load_run(b_path)
        except ResultsError as e:
            print(f"compare_tolerance.py: {e}", file=sys.stderr)
            return 2
        c = compare_two(a, b)
        n, same, judged = len(c.points), len(c.unchanged), len(c.points) - len(c.unstable)
        real = [w for w in c.winners if w.beyond_noise]
        # Unstable because the runs' CPU-pair readings lie apart (commatlas.analysis.host_activity).
        placed = [p for p in c.unstable if "placed the job's CPUs apart" in p.verdict.why]
        print(f"{a_path} vs {b_path}: {same} of {judged} judged points 'no change' ({same / max(judged, 1):.1%}), "
              f"{len(c.different)} changed; {len(c.unstable)} of {n} unstable (not judged; {len(placed)} of them "
              f"where the host had put the CPUs apart); "
              f"{len(real)} winners changed beyond the noise "
              f"({len(c.winners) - len(real)} more within it){'; ' + c.winners_note if c.winners_note else ''}")
        pooled.append((judged, len(c.different)))
        print(f"  rule ({c.rule.kind}): {c.rule.text}")
        apart = {name for t in c.rule.tolerances for name in t.apart}
        causes = Counter(cause(p, apart) for p in c.different)
        print("  changed, by cause: " + ("; ".join(f"{k} {v}" for k, v in causes.most_common()) or "none"))
        for p in c.different:
            print(f"  changed: {p.benchmark} {p.variant} {p.size} ×{p.ratio:.2f}: {p.verdict.why}")
        for w in real:
            print(f"  winner: {w.movement}, {w.bin}: {w.base} → {w.other} ({w.why})")
        s = compare_two(a, slowed(b, SLOWDOWN))
        judged = len(s.points) - len(s.unstable)
        print(f"  planted {SLOWDOWN - 1:.0%} slowdown of the second run: {len(s.different)} of {judged} judged points "
              f"changed ({len(s.different) / max(judged, 1):.1%}), all worse: "
              f"{all(p.improvement < 1 for p in s.different)}")
        print(f"    rule: {s.rule.text}")
        for factor in factors:
            flagged, planted = isolated(a, b, c, factor)
            print(f"  planted {factor:g}x slowdown at one point, {planted} points in turn: "
                  f"{flagged} called changed ({flagged / max(planted, 1):.0%})")
    if len(pooled) > 1:
        judged, changed = sum(j for j, _ in pooled), sum(c for _, c in pooled)
        rate = changed / max(judged, 1)
        short = sum(1 for j, c in pooled if j and (j - c) / j < GOAL)
        print(f"pooled over {len(pooled)} pairs: {changed} of {judged} judged points changed ({rate:.1%}; "
              f"'no change' {1 - rate:.1%}); {short} pairs below {GOAL:.0%}, "
              f"{below_goal_by_chance([j for j, _ in pooled], rate):.1f} expected by chance alone at that rate")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the listing quietly, as for any filter
    sys.exit(main(sys.argv[1:]))
