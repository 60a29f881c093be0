#!/usr/bin/env python3
"""Measures how far identical runs differ, per metric and size range: the numbers behind
commatlas.compare.DEFAULT_BANDS.

    scripts/compare_tolerance.py RUN_A1 RUN_B1 [RUN_A2 RUN_B2 ...]

Each pair is two identical runs made back to back (same command, same machine). Prints, per
band, the quantiles of how far a point moved (commatlas.compare.moved: median and fast end
both, the same way) over the points both runs measured, and how many points the
current default tolerance calls "no change" (the goal: at least 95% in every pair).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from commatlas.compare import DEFAULT_BANDS, DEFAULT_RULE, band_of, center, compare_two, group_points, moved  # noqa: E402
from commatlas.results import load_run  # noqa: E402


def main(paths: list[str]) -> int:
    if len(paths) < 2 or len(paths) % 2:
        print(__doc__, file=sys.stderr)
        return 2
    moves: dict[object, list[float]] = {band: [] for band in DEFAULT_BANDS}
    for a_path, b_path in zip(paths[::2], paths[1::2]):
        a, b = load_run(a_path), load_run(b_path)
        ga, gb = group_points(a.results, {}), group_points(b.results, {})
        for key in set(ga) & set(gb):
            band = band_of(DEFAULT_BANDS, ga[key][0].metric, key[3])
            if band is not None:
                moves[band].append(abs(moved(center(ga[key]), center(gb[key]))))
        c = compare_two(a, b)
        same = len(c.points) - len(c.different)
        print(f"{a_path} vs {b_path}: {same} of {len(c.points)} points 'no change' "
              f"({same / max(len(c.points), 1):.1%}) under the {c.rule.kind} rule")
    print(f"\n{'band':28} {'points':>6} {'p50':>6} {'p90':>6} {'p95':>6} {'p99':>6} {'max':>6} {'default':>8} {'within':>7}")
    for band, values in moves.items():
        if not values:
            print(f"{band.label:28} {0:>6}")
            continue
        q = np.quantile(values, [0.5, 0.9, 0.95, 0.99])
        within = np.mean(np.array(values) <= band.tolerance)
        print(f"{band.label:28} {len(values):>6} " + " ".join(f"{x:>6.1%}" for x in q)
              + f" {max(values):>6.1%} {band.tolerance:>8.0%} {within:>7.1%}")
    print(f"\nrule: {DEFAULT_RULE.text}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
