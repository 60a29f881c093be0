#!/usr/bin/env python3
"""Are two runs' records the same in everything but what was measured?

For a change that must not change behaviour (a reshaping of the code): every point both runs
measured must carry the same benchmark, params, movement, bytes, accounting, timing method, peak
and verification. What a measurement decides (times, statistics, sample counts, the stop reason,
the fraction of peak, the wire counters, any *_gbps, *_us or *_s figure) may differ and is left
out. Points measured by one run
only are listed (a run cut short by its time limit measures fewer).

    python3 scripts/device/records_same.py BEFORE_RUN AFTER_RUN

Prints each field that differs, with how many points and one example, and exits 1 when a field
outside the measured ones differs; 0 when none does; 2 on bad input.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "python"))
from commatlas.io.points import params_key  # noqa: E402
from commatlas.io.records import read_records  # noqa: E402

# Paths (dotted) whose value is a measurement or follows from one.
MEASURED = {
    "time", "cost", "stats", "samples_s", "bandwidth_gbps", "latency_us", "peak.fraction",
    "timing.samples", "timing.ops_per_sample", "timing.warmup_samples", "timing.precision_reached",
    "timing.stop_reason", "timing.batches", "timing.warmup", "wire", "goodput", "harness_check",
}


# Leaf names that are figures wherever they stand ("collective.busbw_gbps").
MEASURED_SUFFIXES = ("_gbps", "_us", "_s")


def measured(path: str) -> bool:
    return path.endswith(MEASURED_SUFFIXES) or any(path == m or path.startswith(m + ".") for m in MEASURED)


def read(run: Path) -> dict[str, dict[str, Any]]:
    path = run / "results.jsonl" if run.is_dir() else run
    if not path.is_file():
        print(f"records_same: no results.jsonl at {run}", file=sys.stderr)
        sys.exit(2)
    points: dict[str, dict[str, Any]] = {}
    for record in read_records(path):  # older param names mapped to today's
        if record.get("type") in ("result", "skip", "error") and "point" in record:
            points[f'{record["type"]} {point_of(record)}'] = record
    return points


def point_of(r: dict[str, Any]) -> str:
    """The point a record measured, its params in today's names (the engine's `point` text spells
    them as the engine that wrote it did, so it is the key's old spelling, not compared)."""
    library = json.dumps(r.get("mpi_library"), sort_keys=True) if r.get("mpi_library") else ""
    params = ",".join(f"{k}={v}" for k, v in params_key(r.get("params") or {}, library))
    repeat = f"|r{r['repeat']}" if r.get("repeat") is not None else ""
    return f"{r.get('benchmark')}|{params}|{r.get('bytes')}|{r.get('ranks', 1)}{repeat}"


def leaves(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(leaves(v, f"{prefix}.{k}" if prefix else k))
        return out or {prefix: {}}
    return {prefix: value}


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: records_same.py BEFORE_RUN AFTER_RUN", file=sys.stderr)
        return 2
    before, after = read(Path(argv[1])), read(Path(argv[2]))
    common = sorted(before.keys() & after.keys())
    differs: dict[str, list[tuple[str, Any, Any]]] = defaultdict(list)
    for key in common:
        a, b = leaves(before[key]), leaves(after[key])
        a.pop("point", None)
        b.pop("point", None)
        for path in sorted(a.keys() | b.keys()):
            if a.get(path, "<absent>") != b.get(path, "<absent>"):
                differs[path].append((key, a.get(path, "<absent>"), b.get(path, "<absent>")))
    print(f"{len(common)} points in both runs; {len(before.keys() - after.keys())} only before, "
          f"{len(after.keys() - before.keys())} only after")
    for key in sorted(before.keys() ^ after.keys())[:20]:
        print(f"  only {'before' if key in before else 'after'}: {key}")
    structural = sorted(p for p in differs if not measured(p))
    for path in structural:
        key, a, b = differs[path][0]
        print(f"DIFFERS {path}: {len(differs[path])} points, e.g. {key}\n  before: {a!r}\n  after:  {b!r}")
    measured_paths = sorted(p for p in differs if measured(p))
    print(f"measured fields that differ (expected): {', '.join(sorted({p.split('.')[0] for p in measured_paths})) or 'none'}")
    print("same in everything but measurements" if not structural else f"{len(structural)} fields differ")
    return 1 if structural else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
