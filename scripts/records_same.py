#!/usr/bin/env python3
"""Do two runs' records say the same thing apart from their timings?

For a change that must not change what is measured (a reshaping of the engine's code), the records
of a run before and a run after must agree on everything but the numbers: the same points, each
with the same benchmark, category, interface, suite, params, movement, bytes per operation, peak,
data check method and accounting text. This prints one line per point that differs (and which
fields), and per point that only one run has, then a summary line.

    python3 scripts/records_same.py BEFORE AFTER [--ignore FIELD ...]

BEFORE and AFTER are run folders (results.jsonl inside) or results.jsonl files. Exit status 0: the
same; 1: a difference; 2: bad arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
from commatlas.io.points import params_key  # noqa: E402
from commatlas.io.records import read_records  # noqa: E402

# What a point says about what it measured; everything else (samples, stats, costs, times, the
# stop reason) is the measurement itself and may differ.
FIELDS = ("type", "benchmark", "category", "interface", "suite", "metric", "params", "movement", "bytes", "ranks",
          "bytes_per_op", "latency_includes", "timing.method", "timing.max_over_ranks", "verified.method", "peak",
          "reason")


def point_of(r: dict) -> str:
    """The point a record measured, its params in today's names: the engine's `point` text spells
    them as the engine that wrote it did, so a renamed param would make every such point new."""
    library = json.dumps(r.get("mpi_library"), sort_keys=True) if r.get("mpi_library") else ""
    params = ",".join(f"{k}={v}" for k, v in params_key(r.get("params") or {}, library))
    repeat = f"|r{r['repeat']}" if r.get("repeat") is not None else ""
    return f"{r.get('benchmark')}|{params}|{r.get('bytes')}|{r.get('ranks', 1)}{repeat}"


def load(path: Path) -> dict[str, dict]:
    """Engine records by point, read by commatlas's reader (older param names mapped to today's)."""
    if path.is_dir():
        path = path / "results.jsonl"
    return {point_of(r): r for r in read_records(path)
            if r.get("type") in ("result", "skip", "error") and "point" in r}


def field(record: dict, name: str):
    value = record
    for part in name.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--ignore", action="append", default=[], help="a field to leave out (repeatable)")
    args = parser.parse_args(argv)
    for p in (args.before, args.after):
        if not p.exists():
            print(f"records_same: no such run: {p}", file=sys.stderr)
            return 2
    before, after = load(args.before), load(args.after)
    fields = [f for f in FIELDS if f not in args.ignore]
    differ = 0
    for point in sorted(set(before) | set(after)):
        if point not in after:
            print(f"only before: {point}")
            differ += 1
            continue
        if point not in before:
            print(f"only after: {point}")
            differ += 1
            continue
        changed = [f for f in fields if field(before[point], f) != field(after[point], f)]
        if changed:
            differ += 1
            print(f"differs: {point}")
            for f in changed:
                print(f"  {f}: {json.dumps(field(before[point], f))[:300]}")
                print(f"  {' ' * len(f)}  {json.dumps(field(after[point], f))[:300]}")
    common = len(set(before) & set(after))
    print(f"{common} common points, {differ} differ or are in one run only "
          f"({len(before)} before, {len(after)} after)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
