"""The engine-vs-OSU rows of each run under this folder (before-N, after-N), one markdown table.
   PYTHONPATH=python python3 results/cpu-2core/osu-small-messages/table.py DIR"""
import sys
from pathlib import Path

from commatlas import osu
from commatlas.records import read_records

root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
print("| run | benchmark | size | engine | OSU method | engine/OSU | spread engine / OSU | rounds | rule (3% or OSU spread) | verdict |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
for run in sorted(p for p in root.iterdir() if (p / "results.jsonl").is_file()):
    for r in osu.comparison_rows(read_records(run / "results.jsonl")):
        print(f"| {run.name} | {r.benchmark} | {r.bytes} | {r.engine_text} | {r.reference_text} | {r.ratio:.3f} | "
              f"{100 * r.engine_spread:.1f}% / {100 * r.reference_spread:.1f}% | {r.rounds} | "
              f"{'meets' if r.agree else 'misses'} | {r.verdict.text} |")
