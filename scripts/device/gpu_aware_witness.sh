#!/usr/bin/env bash
# Does a GPU-aware MPI job's small-message state show in a plain 8 B copy of the same process
# (gpu_aware_witness.cu says why it might)? JOBS fresh 2-rank jobs under the carried CUDA-aware
# Open MPI, placed as `commatlas run` places them (--map-by slot:PE=N --bind-to core, N = cores / 2),
# each printing per rank its copy latencies, osu_bw's 8 B window and osu_latency's 8 B ping-pong.
# Prints the per-job table; work_folder.sh packs everything into $OUT/gpu-aware-witness.tar.gz.
# Usage (repository root, .device-carry carried): OUT=/some/dir [JOBS=16] bash scripts/device/gpu_aware_witness.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
JOBS=${JOBS:-16}
source scripts/device/work_folder.sh gpu_aware_witness
source scripts/device/build_engine.sh --mpi-only || exit 1
{ nvidia-smi --query-gpu=index,name,driver_version --format=csv; nproc; } > "$W/machine.txt" 2>&1
nvcc -O2 -arch=sm_90 -std=c++17 -ccbin "$OPAL_PREFIX/bin/mpicxx" scripts/device/gpu_aware_witness.cu \
  -o "$W/witness" > "$W/build.log" 2>&1 || { cat "$W/build.log"; exit 1; }
share=$(( $(nproc) / 2 ))
command=(mpiexec --allow-run-as-root --map-by "slot:PE=$share" --bind-to core -n 2 "$W/witness")
echo "${command[*]}" > "$W/commands.txt"
for job in $(seq "$JOBS"); do
  timeout 60 "${command[@]}" 2>> "$W/stderr.txt" | sed "s/^{/{\"job\": $job, /" >> "$W/jobs.jsonl"
done
python3 - "$W/jobs.jsonl" <<'PY' | tee "$W/summary.txt"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
jobs = sorted({r["job"] for r in rows})
print("job  cpus   d2h us (r0 r1)   h2d us (r0 r1)   window us  ping-pong us  d2h after (r0 r1)")
for j in jobs:
    r0, r1 = (next((r for r in rows if r["job"] == j and r["rank"] == k), None) for k in (0, 1))
    if not (r0 and r1):
        print(f"{j:3d}  incomplete")
        continue
    print(f"{j:3d}  {r0['cpu']},{r1['cpu']:<3d} {r0['d2h_us']:6.2f} {r1['d2h_us']:6.2f}    {r0['h2d_us']:6.2f} {r1['h2d_us']:6.2f}"
          f"    {r0['window_us']:8.1f}  {r0['pingpong_us']:8.2f}     {r0['d2h_after_us']:6.2f} {r1['d2h_after_us']:6.2f}")
PY
