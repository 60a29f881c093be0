#!/usr/bin/env python3
"""Does stopping on precision keep the figures and the default run short? Checked on a pair
of back-to-back runs of one machine: the precision-stopped default run against the fixed-budget
run (--precision off --time-budget 0.2), the per-point cost summary, and the projected wall time
of the default run on more GPUs.

    python3 scripts/minute_report.py DEFAULT_RUN_DIR FIXED_RUN_DIR [--spread-from RUN_A RUN_B]...
    python3 scripts/minute_report.py --project MULTI_GPU_DEFAULT_RUN_DIR

Comparison rule: every point of 256 MiB or more on device or pinned memory
whose run-to-run spread is below 0.5% must agree within 1%; the others within their own spread.
The spread of a point is the larger of the two runs' own median intervals (95% half-width; the
p95/p5 of the reservoir is far wider than the median's spread) and, for each pair of identical runs
given with --spread-from (e.g. default/default2 and fixed/fixed2), how far apart that pair's
medians are: run-to-run spread, which a within-run interval cannot see (a pointer chase through
freshly allocated host memory moves 10-20% between runs, with a 1-2% interval inside each).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
from commatlas.io.records import read_records  # noqa: E402
from commatlas.io.results import results_path  # noqa: E402

BIG = 256 << 20


def read(run_dir: Path) -> list[dict[str, Any]]:
    """Every record, by commatlas's reader (older param names mapped to today's)."""
    return read_records(results_path(run_dir) if run_dir.is_dir() else run_dir)


def results(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["point"]: r for r in records if r.get("type") == "result"}


def median_ci_half_width(samples: list[float]) -> float:
    """Relative half-width of the median's 95% order-statistic interval (normal approximation of
    the binomial ranks: fine from the ~30 samples a kept reservoir has)."""
    n = len(samples)
    if n < 6:
        return math.inf
    s = sorted(samples)
    k = max(0, int(math.floor(n / 2 - 1.96 * math.sqrt(n) / 2)))
    lo, hi = s[k], s[min(n - 1, n - 1 - k)]
    med = statistics.median(s)
    return (hi - lo) / 2 / med if med > 0 else math.inf


def on_device_or_pinned(r: dict[str, Any]) -> bool:
    """Device and pinned memory only: pageable and managed paths move with the OS between runs."""
    values = {str(v) for v in r.get("params", {}).values()}
    return not values & {"pageable", "managed", "managed_prefetched", "managed_host_preferred", "registered"}


def run_to_run(pairs: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]) -> dict[str, float]:
    """Per point, the largest relative difference of the medians within any pair of identical runs."""
    spread: dict[str, float] = {}
    for first, second in pairs:
        a, b = results(first), results(second)
        for key in set(a) & set(b):
            d = abs(a[key]["stats"]["median_s"] / b[key]["stats"]["median_s"] - 1)
            spread[key] = max(spread.get(key, 0.0), d)
    return spread


def compare(default: list[dict[str, Any]], fixed: list[dict[str, Any]],
            spread_of: dict[str, float] | None = None) -> tuple[list[str], int]:
    a, b = results(default), results(fixed)
    spread_of = spread_of or {}
    lines = [f"{'point':<90} {'default':>10} {'fixed':>10} {'diff':>7} {'spread':>7} {'limit':>7}  ok"]
    failures = 0
    for key in sorted(set(a) & set(b)):
        ra, rb = a[key], b[key]
        if (ra.get("bytes") or 0) < BIG:
            continue
        ma, mb = ra["stats"]["median_s"], rb["stats"]["median_s"]
        diff = abs(ma / mb - 1)
        spread = max(spread_of.get(key, 0.0), median_ci_half_width(rb.get("samples_s") or []),
                     median_ci_half_width(ra.get("samples_s") or []))
        limit = 0.01 if spread < 0.005 and on_device_or_pinned(ra) else max(0.01, 2 * spread)
        ok = diff <= limit
        failures += not ok
        metric = ra.get("bandwidth_gbps") if ra.get("metric") == "bandwidth" else ra.get("latency_us")
        metric_b = rb.get("bandwidth_gbps") if rb.get("metric") == "bandwidth" else rb.get("latency_us")
        lines.append(f"{key[:90]:<90} {metric:>10.4g} {metric_b:>10.4g} {diff:>7.2%} {spread:>7.2%} {limit:>7.2%}  "
                     f"{'ok' if ok else 'DIFFERS'}")
    return lines, failures


def end_of(records: list[dict[str, Any]]) -> dict[str, Any]:
    ends = [r for r in records if r.get("type") == "end"]
    return ends[-1] if ends else {}


def cost_table(records: list[dict[str, Any]]) -> list[str]:
    per: dict[str, list[dict[str, float]]] = defaultdict(list)
    for r in records:
        if r.get("type") == "result" and isinstance(r.get("cost"), dict):
            per[r["benchmark"]].append(r["cost"])
    lines = [f"{'benchmark':<36} {'points':>6} {'wall s':>8} {'s/point':>8} {'timed':>6} {'warm':>6} {'prep':>6} {'check':>6}"]
    total = 0.0
    for b, costs in sorted(per.items(), key=lambda kv: -sum(c["wall_s"] for c in kv[1])):
        wall = sum(c["wall_s"] for c in costs)
        total += wall
        share = lambda part: sum(c.get(part, 0) for c in costs) / wall if wall else 0  # noqa: E731
        lines.append(f"{b:<36} {len(costs):>6} {wall:>8.2f} {wall / len(costs):>8.3f} {share('timed_s'):>6.0%} "
                     f"{share('warmup_s'):>6.0%} {share('prepare_s'):>6.0%} {share('check_s'):>6.0%}")
    lines.append(f"{'all points':<36} {sum(len(c) for c in per.values()):>6} {total:>8.2f}")
    stops: dict[str, int] = defaultdict(int)
    for r in records:
        if r.get("type") == "result":
            stops[str(r.get("timing", {}).get("stop_reason"))] += 1
    lines.append("stop reasons: " + ", ".join(f"{k} {v}" for k, v in sorted(stops.items())))
    return lines


def per_point_cost(records: list[dict[str, Any]], benchmark: str, min_bytes: int = 0) -> float | None:
    costs = [r["cost"]["wall_s"] for r in records
             if r.get("type") == "result" and r.get("benchmark") == benchmark and isinstance(r.get("cost"), dict)
             and (r.get("bytes") or 0) >= min_bytes]
    return statistics.mean(costs) if costs else None


def variant_of(p: dict[str, Any]) -> str:
    """A copy's path, or where a STREAM kernel's or chase's array is ("local": the HBM of the GPU
    that runs it, "peer": another GPU's)."""
    if p.get("path"):
        return str(p["path"])
    if p.get("allocator") == "device":
        return "local" if p.get("memory_gpu") == p.get("gpu") else "peer"
    return str(p.get("allocator"))


def projection(records: list[dict[str, Any]], gpus: int) -> tuple[float, list[str]]:
    """Projected wall time of the same default run on `gpus` GPUs of one node, from a one-GPU run.

    Model (every term from this run's own per-point costs):
    - everything measured here runs again: the one-GPU wall time (the end record's);
    - what a second GPU adds once (one peer of GPU 0): per copy engine (CE, SM) four peer
      variants (uni/bi x engine on src/dst) at the d2d variant's sizes and cost; one peer
      location each for the STREAM kernels and the GPU pointer chase at the local one's cost;
      one peer path of gpu.copy_latency at the d2d one's cost;
    - what scales with GPU pairs: gpu.copy_{ce,sm}_matrix, N(N-1) ordered pairs uni plus
      N(N-1)/2 bi, and the two fan-out variants of root 0, one 256 MiB point each at the cost of
      this run's >= 256 MiB d2d points;
    - the MPI phase runs N ranks instead of 2: its point-to-point benchmarks use ranks 0 and 1
      (unchanged), its collectives are taken at the measured cost (they stop on precision, and
      NCCL/MPI collective times grow slowly with N at one node).
    """
    end = end_of(records)
    base = float(end.get("wall_s") or 0)
    notes = [f"measured here (1 GPU): {base:.1f} s"]
    if gpus < 2:
        return base, notes
    extra = 0.0
    by_variant: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        if r.get("type") == "result" and isinstance(r.get("cost"), dict):
            by_variant[(r["benchmark"], variant_of(r.get("params", {})))].append(r)

    def variant_cost(benchmark: str, where: str) -> float:
        return sum(r["cost"]["wall_s"] for r in by_variant.get((benchmark, where), []))

    for engine in ("gpu.copy_ce", "gpu.copy_sm"):
        d2d = variant_cost(engine, "d2d")
        extra += 4 * d2d
        notes.append(f"{engine} peer variants: 4 x {d2d:.2f} s")
    for b in ("gpu.stream_read", "gpu.stream_write", "gpu.stream_copy", "gpu.pointer_chase"):
        local = variant_cost(b, "local")
        extra += local
        notes.append(f"{b} peer: {local:.2f} s")
    lat = variant_cost("gpu.copy_latency", "d2d")
    extra += lat
    notes.append(f"gpu.copy_latency peer: {lat:.2f} s")
    big = [r["cost"]["wall_s"] for r in by_variant.get(("gpu.copy_ce", "d2d"), []) + by_variant.get(("gpu.copy_sm", "d2d"), [])
           if (r.get("bytes") or 0) >= BIG]
    c_big = statistics.mean(big) if big else 0.1
    pair_points = 2 * (gpus * (gpus - 1) + gpus * (gpus - 1) // 2 + 2)  # CE and SM: matrix uni + bi, fan-out
    extra += pair_points * c_big
    notes.append(f"matrix + fan-out: {pair_points} points x {c_big:.3f} s")
    return base + extra, notes


GPUS_OF_RECORD = ("gpu", "src_gpu", "dst_gpu", "memory_gpu", "root_gpu")


def gpus_in_run(records: list[dict[str, Any]]) -> int:
    seen: set[int] = set()
    for r in records:
        if r.get("type") == "result":
            for k in GPUS_OF_RECORD:
                v = r.get("params", {}).get(k)
                if isinstance(v, int):
                    seen.add(v)
    return len(seen)


def projection_from_multi_gpu(records: list[dict[str, Any]], gpus: int) -> tuple[float, list[str]]:
    """Projected wall time of the default run on `gpus` GPUs from a default run on n >= 2 GPUs.

    Model: what the engine enumerates per GPU pair grows; the rest is already measured here.
    - gpu.copy_{ce,sm}_matrix: N(N-1) ordered pairs uni plus N(N-1)/2 bi, each at this run's mean
      cost per matrix point;
    - gpu.copy_*_fanout (root 0 in the default tier): the same points, each moving to N-1 peers at
      once, so its cost is scaled by (N-1)/(n-1) (an upper bound: the legs run concurrently);
    - everything else (local and GPU 0 <-> GPU 1 variants, the MPI and NCCL phases, whose
      point-to-point benchmarks use ranks 0 and 1 and whose collectives stop on precision) at the
      cost measured here.
    So it is a floor: the collectives and the MPI jobs cost more on more ranks. From 2x to 4x H100
    the collectives' points went from 10.8-11.7 s to 15.7-16.6 s, and the whole default run from
    69.5-70.4 s to 78.0-86.0 s (results/nvidia-h100-x4/four-gpus/), where this model from a 2x H200
    run had said 54 s.
    """
    n = gpus_in_run(records)
    base = float(end_of(records).get("wall_s") or 0)
    notes = [f"measured here ({n} GPUs): {base:.1f} s"]
    if n < 2:
        return base, notes + ["not a multi-GPU run"]
    extra = 0.0
    for engine in ("gpu.copy_ce_matrix", "gpu.copy_sm_matrix"):
        costs = [r["cost"]["wall_s"] for r in records
                 if r.get("type") == "result" and r.get("benchmark") == engine and isinstance(r.get("cost"), dict)]
        if not costs:
            continue
        per = statistics.mean(costs)
        points = lambda g: g * (g - 1) + g * (g - 1) // 2  # noqa: E731
        extra += (points(gpus) - points(n)) * per
        notes.append(f"{engine}: {points(gpus)} points x {per:.3f} s (here {len(costs)})")
    fan = sum(r["cost"]["wall_s"] for r in records if r.get("type") == "result" and
              str(r.get("benchmark", "")).endswith("_fanout") and isinstance(r.get("cost"), dict))
    if fan:
        extra += fan * ((gpus - 1) / (n - 1) - 1)
        notes.append(f"fan-out: {fan:.2f} s x {(gpus - 1) / (n - 1):.1f}")
    return base + extra, notes


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("default_run", type=Path)
    p.add_argument("fixed_run", type=Path, nargs="?")
    p.add_argument("--spread-from", type=Path, nargs=2, action="append", default=[], metavar=("RUN_A", "RUN_B"),
                   help="a pair of identical runs: their difference per point is run-to-run spread")
    p.add_argument("--project", action="store_true",
                   help="only project DEFAULT_RUN (a default run on 2+ GPUs) to 4 and 8 GPUs")
    args = p.parse_args(argv)
    default = read(args.default_run)
    if args.project:
        print(f"wall (end record): {end_of(default).get('wall_s')} s")
        print("\n".join(cost_table(default)))
        print("\n== projected default wall time (a floor: collectives and MPI jobs held at this run's cost)")
        for n in (4, 8):
            if n <= gpus_in_run(default):
                continue  # measured here, not projected
            total, notes = projection_from_multi_gpu(default, n)
            print(f"{n} GPUs: at least {total:.0f} s  ({'; '.join(notes)})")
        return 0
    if args.fixed_run is None:
        p.error("FIXED_RUN is needed unless --project")
    fixed = read(args.fixed_run)
    spread = run_to_run([(read(x), read(y)) for x, y in args.spread_from])
    print(f"wall (end record): default {end_of(default).get('wall_s')} s, fixed {end_of(fixed).get('wall_s')} s")
    print("\n== points >= 256 MiB: default (precision) vs fixed budget")
    lines, failures = compare(default, fixed, spread)
    print("\n".join(lines))
    print(f"{failures} point(s) outside their limit")
    print("\n== per-point cost, default run")
    print("\n".join(cost_table(default)))
    print("\n== per-point cost, fixed run")
    print("\n".join(cost_table(fixed)))
    print("\n== projected default wall time")
    for n in (4, 8):
        total, notes = projection(default, n)
        print(f"{n} GPUs: {total:.0f} s  ({'; '.join(notes)})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
