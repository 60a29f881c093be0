#!/usr/bin/env bash
# The copy-level witness (timing.copy_level_us) in real runs, in one device call on a 2-GPU kind:
# JOBS fresh `commatlas run` jobs of GPU-aware and staged point-to-point MPI at four sizes (each
# draws its processes' copy levels afresh), `commatlas compare` of every job against the first, then
# one default run (what the witness costs it, and that every other record is as before).
# Records and compares land in $OUT/copy-level-runs.tar.gz (work_folder.sh packs them).
# ONLY replaces the benchmarks (e.g. the GPU-aware collectives); SUITE replaces `--suite mpi-gpu`
# (SUITE= lets the run choose: the OSU-method references, reference.osu_*, belong to the mpi suite);
# SIZES replaces the sizes; DEFAULT=0 leaves the default run out.
# Usage (repository root, .device-carry carried):
#   OUT=/some/dir [JOBS=6] [DEFAULT=1] [ONLY=...] [SUITE=mpi-gpu] [SIZES=8,4K,64K,1M] bash scripts/device/copy_level_runs.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
JOBS=${JOBS:-6}
source scripts/device/work_folder.sh copy_level_runs
source scripts/device/build_engine.sh build-level "$W/build.log" || exit 1
nvidia-smi --query-gpu=index,name,driver_version --format=csv > "$W/nvidia-smi.csv"
only=${ONLY:-'mpi.gpu_aware.pingpong,mpi.gpu_aware.bandwidth,mpi.gpu_aware.bibw,mpi.staged.bandwidth'}
suite=(); [ -n "${SUITE-mpi-gpu}" ] && suite=(--suite "${SUITE-mpi-gpu}")
sizes=${SIZES:-8,4K,64K,1M}
for job in $(seq "$JOBS"); do
  echo "commatlas run --out job-$job ${suite[*]} --only '$only' --sizes $sizes" >> "$W/commands.txt"
  timeout 120 python3 -m commatlas run --out "$W/job-$job" "${suite[@]}" --only "$only" --sizes "$sizes" \
    > "$W/job-$job.log" 2>&1
  echo "job-$job: rc=$?"
  python3 - "$W/job-$job/results.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") == "result" and r["bytes"] == 8 and r['timing'].get('copy_level_us'):
        print(f"  {r['benchmark']:26s} {r['params'].get('allocator', '-'):8s} {r['latency_us']:9.2f} us a message"
              f"  copy levels {r['timing'].get('copy_level_us')}")
PY
done
for job in $(seq 2 "$JOBS"); do
  COLUMNS=100 python3 -m commatlas compare "$W/job-1" "$W/job-$job" > "$W/compare-1-$job.txt" 2>&1
  echo "compare job-1 job-$job: $(grep -m1 'common points changed' "$W/compare-1-$job.txt")"
done
if [ "${DEFAULT:-1}" = 1 ]; then
  echo "commatlas run --out default" >> "$W/commands.txt"
  { time timeout 150 python3 -m commatlas run --out "$W/default" > "$W/default.log" 2>&1; } 2> "$W/default.time"
  echo "default: rc=$? $(grep real "$W/default.time")"
fi
