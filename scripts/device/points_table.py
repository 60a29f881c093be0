#!/usr/bin/env python3
"""Small tables the device scripts print from a records file.

    points_table.py FILE.jsonl                        every result/error/skip, one line each
    points_table.py --harness-check RUN_DIR           every reference loop against its partner
                                                      (commatlas.analysis.harness_check, as the report does)
    points_table.py --osu-rule FILE.jsonl             the engine against the OSU method over --repeat
                                                      rounds, a Markdown table with the issue's rule
                                                      (3%, or the reference's own spread where wider)
"""
from __future__ import annotations

import json
import sys


def records(path: str) -> list[dict]:
    out = []
    for line in open(path):
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def points(path: str) -> None:
    for r in records(path):
        if r.get("type") not in ("result", "error", "skip"):
            continue
        if r["type"] == "result":
            figure = r.get("bandwidth_gbps") or r.get("latency_us")
            what = f"{figure:.4g} {'GB/s' if 'bandwidth_gbps' in r else 'us'}, verified {r.get('verified')}"
        else:
            what = r.get("message") or r.get("reason") or ""
        print(f"  {r['type']:6} {r['benchmark']:26} {r.get('bytes') or 0:>9} {what[:100]}")


def harness_pairs(run_dir: str) -> None:
    from commatlas.analysis.harness_check import harness_check
    from commatlas.io.results import load_run

    check = harness_check(load_run(run_dir))
    for p in check.pairs:
        spread = f", spread {p.spread:.1%}" if p.spread is not None else ""
        print(f"  {p.benchmark} {p.variant} {p.bytes} B: harness {p.harnessed:.4g}, bare {p.bare:.4g} "
              f"({p.harnessed / p.bare - 1:+.1%}{spread}): {p.judgement}")
    print(f"  {check.summary_line()}")
    for u in check.unpaired:
        print(f"  {u.reference} {u.sizes}: no partner, {u.reason}")


def osu_rule(path: str) -> None:
    from pathlib import Path

    from commatlas.analysis import osu
    from commatlas.io.records import read_records

    rows = osu.comparison_rows(read_records(Path(path)))
    print("| benchmark | size | engine | OSU method | engine/OSU | spread engine / OSU | rounds | "
          "rule (3% or OSU spread) | verdict |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    for r in rows:
        print(f"| {r.benchmark} | {r.bytes} | {r.engine_text} | {r.reference_text} | {r.ratio:.3f} | "
              f"{100 * r.engine_spread:.1f}% / {100 * r.reference_spread:.1f}% | {r.rounds} | "
              f"{'meets' if r.agree else 'MISSES'} | {r.verdict.text} |")
    device = [r for r in rows if r.benchmark.startswith("mpi.gpu_aware.")]
    host = [r for r in rows if r not in device]
    print(f"\n{sum(r.agree for r in device)} of {len(device)} device points and "
          f"{sum(r.agree for r in host)} of {len(host)} host points meet the rule")


if __name__ == "__main__":
    if sys.argv[1] == "--harness-check":
        harness_pairs(sys.argv[2])
    elif sys.argv[1] == "--osu-rule":
        osu_rule(sys.argv[2])
    else:
        points(sys.argv[1])
