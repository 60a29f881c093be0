#!/usr/bin/env bash
# Whether holding the GPU driver (`commatlas-engine hold`, started by the CLI) changes any figure:
# the same engine (this tree's) driven by this tree's CLI, which holds the driver, and by BASE_PY,
# a CLI that does not (an older tree's python/ folder), in fresh runs interleaved ROUNDS times (4),
# on the points where session 27's first base/head pair moved: launch-included and small copies,
# host MPI at small sizes, staged MPI's bibw at 16 MiB.
# Run from the repository root (.device-carry carried):
#   OUT=/some/dir BASE_PY=/tmp/b/python bash scripts/device/driver_hold_ab.sh
set -uo pipefail
BASE_PY=${BASE_PY:?set BASE_PY to a python/ folder whose CLI does not hold the driver}
source scripts/device/work_folder.sh driver_hold_ab
source scripts/device/build_engine.sh build-head "$W/build.log" || exit 1
ONLY=gpu.copy_launch,gpu.copy_latency,mpi.bibw,mpi.bandwidth,mpi.staged.bibw
SIZES=1,64,4096,65536,16777216
for k in $(seq 1 "${ROUNDS:-4}"); do
  for side in unheld held; do
    py=$PWD/python; [ "$side" = unheld ] && py=$BASE_PY
    t0=$SECONDS
    PYTHONPATH=$py timeout -s INT 120 python3 -m commatlas run --only "$ONLY" --sizes "$SIZES" --out "$W/$side-$k" \
      > "$W/$side-$k.log" 2>&1
    echo "$side-$k rc=$? $((SECONDS - t0)) s" | tee -a "$W/runs.txt"
  done
done
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import json, statistics, sys
from pathlib import Path
w = Path(sys.argv[1])
figures = {}
for run in sorted(w.glob("*-[0-9]*/results.jsonl")):
    side = run.parent.name.rsplit("-", 1)[0]
    for line in run.read_text().splitlines():
        r = json.loads(line)
        if r.get("type") == "result":
            key = r["point"].rsplit("|", 1)[0] if r["ranks"] > 1 else r["point"]
            figures.setdefault(key, {}).setdefault(side, []).append(r["stats"]["median_s"])
print("point: median of each side's medians (s), held / unheld, and whether the sides' runs overlap")
for key, sides in sorted(figures.items()):
    if len(sides) < 2:
        continue
    a, b = sides["unheld"], sides["held"]
    overlap = max(min(a), min(b)) <= min(max(a), max(b))
    print(f"{statistics.median(b) / statistics.median(a):6.3f} {'overlap' if overlap else 'APART  '} "
          f"unheld {min(a):.4g}-{max(a):.4g} held {min(b):.4g}-{max(b):.4g}  {key[:110]}")
PY
