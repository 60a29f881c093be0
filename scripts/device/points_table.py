#!/usr/bin/env python3
"""Small tables the device scripts print from a records file.

    points_table.py FILE.jsonl                        every result/error/skip, one line each
    points_table.py --memcpy-vs-reference FILE.jsonl  host.memcpy against reference.host_memcpy
                                                      at the same size and thread count
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


def memcpy_vs_reference(path: str) -> None:
    res = [r for r in records(path) if r.get("type") == "result"]
    ref = {(r["bytes"], r["params"]["threads"]): r for r in res if r["benchmark"] == "reference.host_memcpy"}
    for r in res:
        key = (r.get("bytes"), r.get("params", {}).get("threads"))
        if r["benchmark"] == "host.memcpy" and key in ref:
            b = ref[key]
            print(f"  {key[0]:>10} B {key[1]:>3} threads numa={r['params'].get('numa_placement')}: harness "
                  f"{r['bandwidth_gbps']:.1f} GB/s, bare {b['bandwidth_gbps']:.1f} GB/s, "
                  f"{r['bandwidth_gbps'] / b['bandwidth_gbps'] - 1:+.1%}")


if __name__ == "__main__":
    if sys.argv[1] == "--memcpy-vs-reference":
        memcpy_vs_reference(sys.argv[2])
    else:
        points(sys.argv[1])
