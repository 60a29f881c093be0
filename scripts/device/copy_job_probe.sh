#!/usr/bin/env bash
# check-order on 2x H100 found gpu.copy_ce's pageable host -> GPU copy at 256 MiB 0.73x slower in
# jobs of gpu.copy_ce alone (5.7-5.9 GB/s) than in jobs that also held the copy family and the
# single-process NCCL benchmarks (6.9-8.2), although gpu.copy_ce runs first in both. Fresh jobs of
# three selections at 256 MiB, interleaved over ROUNDS rounds: does the selection change the figure?
#   alone   --only gpu.copy_ce
#   nccl    --only gpu.copy_ce,nccl.single.allgather
#   family  --only 'gpu.copy*,nccl.single.*' (the check's in-order jobs)
# Usage (repository root, .device-carry carried): OUT=/some/dir [ROUNDS=3] bash scripts/device/copy_job_probe.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
source scripts/device/work_folder.sh copy_job_probe
source scripts/device/build_engine.sh build-order "$W/build.log" || exit 1
set -f
declare -A ONLY=([alone]=gpu.copy_ce [nccl]=gpu.copy_ce,nccl.single.allgather [family]='gpu.copy*,nccl.single.*')
for k in $(seq 1 "${ROUNDS:-3}"); do
  for name in alone nccl family; do
    echo "round-$k/$name: commatlas run --only ${ONLY[$name]} --sizes 256M" >> "$W/commands.txt"
    timeout -s INT 90 python3 -m commatlas run --only "${ONLY[$name]}" --sizes 256M --out "$W/round-$k/$name" \
      > "$W/round-$k-$name.log" 2>&1
    echo "round $k $name: rc=$?"
  done
done
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import json, sys
from pathlib import Path
w = Path(sys.argv[1])
rows = {}
for f in sorted(w.glob("round-*/*/results.jsonl")):
    for line in f.read_text().splitlines():
        r = json.loads(line)
        if r.get("type") == "result" and r["benchmark"] == "gpu.copy_ce" and r["params"].get("host_allocator") in ("pageable", "managed"):
            p = r["params"]
            key = f"{p['path']} {p['host_allocator']} {p.get('managed_hint') or ''} touch={p.get('first_touch')}"
            rows.setdefault(key, {})[f"{f.parent.parent.name}/{f.parent.name}"] = r["bandwidth_gbps"]
cols = sorted({c for v in rows.values() for c in v}, key=lambda c: (c.split("/")[1], c))
print("gpu.copy_ce, pageable and managed host buffers, 256 MiB (GB/s)")
print(f"{'variant':<40}" + "".join(f"{c:>16}" for c in cols))
for key, v in sorted(rows.items()):
    print(f"{key:<40}" + "".join(f"{v.get(c, float('nan')):16.2f}" for c in cols))
PY
