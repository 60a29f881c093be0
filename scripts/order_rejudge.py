"""Judges the jobs of a finished `commatlas check-order` again with this checkout's rule, without
measuring anything: the run, the jobs alone and the jobs in order are read from their records
(gzipped or not), wherever the check's folder now lies (a device call's /tmp paths are mapped to
ORDER_DIR). Prints the verdict counts before and now, and every point whose verdict changed.

    python3 scripts/order_rejudge.py RUN_DIR ORDER_DIR [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from commatlas.analysis.order import AloneRun, judge_order  # noqa: E402
from commatlas.io.results import load_run  # noqa: E402


def job(entry: dict, order_dir: Path) -> AloneRun:
    # The recorded directory ends in .../round-K/KEY or .../round-K/in-order: keep that tail.
    tail = Path(entry["directory"]).parts[-2:]
    return AloneRun(entry["benchmark"], order_dir.joinpath(*tail), entry["ok"], entry["message"], entry["wall_s"],
                    entry.get("round", 1))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", type=Path)
    p.add_argument("order", type=Path)
    p.add_argument("--json", type=Path, help="write the new verdicts here")
    a = p.parse_args()
    before = json.loads((a.order / "order-check.json").read_text())
    alone = [job(e, a.order) for e in before["alone_runs"]]
    in_order = [job(e, a.order) for e in before.get("in_order_runs", [])]
    check = judge_order(load_run(a.run), alone, a.order, in_order)
    now = Counter(p.verdict for p in check.points)
    print(f"before: {before['counts']}")
    print(f"now:    {dict(now)}")
    old = {(p["benchmark"], p["variant"], p["bytes"]): p for p in before["points"]}
    for point in check.points:
        was = old.get((point.benchmark, point.variant, point.bytes))
        if was and was["verdict"] != point.verdict:
            print(f"  {was['verdict']} -> {point.verdict}: {point.benchmark} {point.bytes} B {point.variant[:50]}: {point.why}")
    for point in check.points:
        if point.verdict == "differs":
            print(f"  differs: {point.benchmark} {point.bytes} B alone/full {point.ratio:.3f} {point.variant[:50]}: {point.why}")
    if a.json:
        a.json.write_text(json.dumps({"counts": dict(now), "rule": check.rule,
                                      "points": [asdict(p) for p in check.points]}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
