"""Where a run's time went between its points: for each record (result, skip, error) the time since
the record before it, less what the records account for (the point's own `cost.wall_s`, and at a
variant's first point the confirmation batches of the variant before it). What is left is the
runner's own time between points: freeing a variant's buffers, the wire check's untimed pass,
records and progress lines, and, where a phase or program changes, its launch.

    python3 scripts/record_gaps.py RUN/results.jsonl[.gz] [N]

Prints the sums per rank count and kind (inside a variant, or at a variant's start); the median gap
at the start of a variant whose first point carries a wire check (less the check's own pass) and of
one without (a variant's first record is written after its wire check, so the check's counter reads
fall in that gap); then the N largest gaps (30).
"""
from __future__ import annotations

import collections
import gzip
import json
import statistics
import sys


def main(path: str, shown: int = 30) -> None:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        records = [json.loads(line) for line in f if line.strip()]
    confirm = {r["point"]: r.get("confirm_s", 0.0) for r in records if r["type"] == "stability"}

    def variant(r: dict) -> tuple[str, str]:
        return r["benchmark"], json.dumps(r.get("params"), sort_keys=True)

    body = [r for r in records if r["type"] in ("result", "skip", "error") and "time" in r]
    sums: collections.Counter = collections.Counter()
    counts: collections.Counter = collections.Counter()
    gaps = []
    checked: list[float] = []    # variant starts whose first point has a wire check: gap less its pass
    unchecked: list[float] = []  # and those without
    waiting = 0.0  # confirmation time of the variant in progress, spent before the next variant starts
    previous = None
    for r in body:
        own = (r.get("cost") or {}).get("wall_s", 0.0)
        if previous is not None:
            starts = variant(r) != variant(previous)
            gap = r["time"] - previous["time"] - own - (waiting if starts else 0.0)
            if starts:
                waiting = 0.0
                if r["type"] == "result":
                    wire = r.get("wire")
                    (checked if wire else unchecked).append(gap - (wire or {}).get("pass_s", 0.0))
            kind = "variant start" if starts else "inside a variant"
            sums[(r.get("ranks"), kind)] += gap
            counts[(r.get("ranks"), kind)] += 1
            gaps.append((gap, r["type"], r["benchmark"], r.get("bytes"), kind, previous["benchmark"]))
        waiting += confirm.get(r["point"], 0.0)
        previous = r
    for (ranks, kind), total in sorted(sums.items(), key=lambda kv: str(kv[0])):
        print(f"ranks {ranks}, {kind}: {total:.2f} s over {counts[(ranks, kind)]} records")
    for name, values in (("with a wire check (less its pass)", checked), ("without one", unchecked)):
        if values:
            print(f"variant starts {name}: median {statistics.median(values) * 1e3:.1f} ms over {len(values)}")
    print(f"largest {shown}:")
    for gap, kind_of_record, benchmark, size, kind, before in sorted(gaps, reverse=True)[:shown]:
        print(f"{gap:7.3f} s  {kind_of_record:6} {benchmark} {size} ({kind}, after {before})")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 30)
