#!/usr/bin/env python3
"""How `commatlas compare` judges identical runs, and whether it still sees a planted slowdown.

    scripts/compare_tolerance.py [--without-cpu-pair] RUN_A1 RUN_B1 [RUN_A2 RUN_B2 ...]

Each pair is two identical runs made back to back (same command, same machine). For each pair it
prints how many points compare calls "no change", changed or unstable, its rule (each tolerance
and where it came from), the winner changes, and then the same comparison against a copy of the
second run with every time 15% longer (every sample and statistic scaled, as a real uniform
slowdown would leave them): how many of its points are called changed. The goal: at least 95%
"no change" on every identical pair, and the planted slowdown flagged.

--without-cpu-pair judges as compare did before the CPU-pair witness: no two readings ever lie
apart (commatlas.analysis.host_activity.PLACEMENT_APART), so no move is laid to the host's
placement of the CPUs and every point counts towards the tolerance.
"""
from __future__ import annotations

import copy
import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

import commatlas.analysis.host_activity as host_activity  # noqa: E402
from commatlas.analysis.compare import compare_two  # noqa: E402
from commatlas.io.results import Run, Stats, load_run  # noqa: E402

SLOWDOWN = 1.15


def slowed(run: Run, factor: float) -> Run:
    """The run with every time `factor` times longer."""
    out = copy.copy(run)
    results = []
    for r in run.results:
        stats = Stats(*[v * factor if name.endswith("_s") else v for name, v in zip(Stats.__dataclass_fields__, (
            getattr(r.stats, f) for f in Stats.__dataclass_fields__))])
        collective = r.collective and replace(r.collective, algbw_gbps=r.collective.algbw_gbps / factor,
                                              busbw_gbps=r.collective.busbw_gbps / factor,
                                              goodput_gbps=r.collective.goodput_gbps / factor)
        results.append(replace(r, stats=stats, bandwidth_gbps=r.bandwidth_gbps / factor, latency_us=r.latency_us * factor,
                               collective=collective, _samples_at=None, _samples=np.asarray(r.samples) * factor))
    out.results = results
    return out


def main(paths: list[str]) -> int:
    if paths[:1] == ["--without-cpu-pair"]:
        paths = paths[1:]
        host_activity.PLACEMENT_APART = math.inf
    if len(paths) < 2 or len(paths) % 2:
        print(__doc__, file=sys.stderr)
        return 2
    for a_path, b_path in zip(paths[::2], paths[1::2]):
        a, b = load_run(a_path), load_run(b_path)
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
        print(f"  rule ({c.rule.kind}): {c.rule.text}")
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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
