#!/usr/bin/env bash
# Host-buffer OSU-method figures with the rank's CUDA context made after MPI_Init (a host sweep
# alone, --gpu-context, as two launches ran it before session 16) and made before MPI_Init (the
# host sweep of a launch that also sweeps device buffers, as `commatlas run` launches it now),
# beside the engine's own host-buffer points in a job of their own, ROUNDS times (5) interleaved.
# Needs a built engine (ENGINE; commatlas-osu-ref beside it) and the carried Open MPI in /opt/ompi-cuda.
#   OUT=/some/dir ENGINE=build-head/engine/commatlas-engine bash scripts/device/osu_context.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives the lines}
ENGINE=${ENGINE:?set ENGINE to a built commatlas-engine}
OSU=$(dirname "$ENGINE")/commatlas-osu-ref
export OPAL_PREFIX=/opt/ompi-cuda PATH=/opt/ompi-cuda/bin:$PATH LD_LIBRARY_PATH=/opt/ompi-cuda/lib:${LD_LIBRARY_PATH:-}
MPIEXEC=(mpiexec --allow-run-as-root --map-by slot:PE=16 --bind-to core -n 2)
SIZES=1,64,4096,65536
W=$OUT/osu-context
mkdir -p "$W"
for round in $(seq 1 "${ROUNDS:-5}"); do
  "${MPIEXEC[@]}" "$OSU" --tests latency,bw,bibw --sizes $SIZES --gpu-context > "$W/after-$round.jsonl" 2> "$W/after-$round.err"
  "${MPIEXEC[@]}" "$OSU" --tests latency,bw,bibw --sizes $SIZES --gpu-context --then --tests latency --sizes 8 \
    --buffers device > "$W/before-$round.jsonl" 2> "$W/before-$round.err"
  "${MPIEXEC[@]}" "$ENGINE" run --mpi --only mpi.pingpong,mpi.bandwidth,mpi.bibw --sizes $SIZES \
    --out "$W/engine-$round.jsonl" > /dev/null 2> "$W/engine-$round.err"
  echo "round $round done"
done
python3 - "$W" "${ROUNDS:-5}" <<'PY' | tee "$OUT/osu-context.txt"
import json, statistics, sys
from pathlib import Path
w, rounds = Path(sys.argv[1]), int(sys.argv[2])
figure = {}  # (side, test, bytes) -> [values]
names = {"mpi.pingpong": "osu_latency", "mpi.bandwidth": "osu_bw", "mpi.bibw": "osu_bibw"}
for k in range(1, rounds + 1):
    for side in ("after", "before"):
        for line in (w / f"{side}-{k}.jsonl").read_text().splitlines():
            o = json.loads(line) if line.startswith("{") else None
            if o and o.get("buffers") == "host":
                v = o.get("latency_us") or o["mb_per_s"] / 1e3
                figure.setdefault((side, o["test"], o["bytes"]), []).append(v)
    for line in (w / f"engine-{k}.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r.get("type") == "result" and r["benchmark"] in names:
            v = r["latency_us"] if r["benchmark"] == "mpi.pingpong" else r["bandwidth_gbps"]
            figure.setdefault(("engine", names[r["benchmark"]], r["bytes"]), []).append(v)
print(f"{'test':<12}{'bytes':>7}  {'engine':>22}  {'context after MPI_Init':>24}  {'context before MPI_Init':>24}   (median [min-max] of {rounds} jobs; us or GB/s)")
for test in ("osu_latency", "osu_bw", "osu_bibw"):
    for size in (1, 64, 4096, 65536):
        cells = []
        for side in ("engine", "after", "before"):
            v = figure.get((side, test, size), [])
            cells.append(f"{statistics.median(v):.4g} [{min(v):.4g}-{max(v):.4g}]" if v else "-")
        print(f"{test:<12}{size:>7}  {cells[0]:>22}  {cells[1]:>24}  {cells[2]:>24}")
PY
