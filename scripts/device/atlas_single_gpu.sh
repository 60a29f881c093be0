#!/usr/bin/env bash
# Evidence on one GPU (declared movements, precision stopping, data checks), in one device call:
# build for sm_90 against the machine's own MPI, then back to back
#   default   `commatlas run`                       (wall target 60 s; its answers.json + report)
#   default2  the same again                        (identical-run pair for compare's tolerances)
#   quick     `commatlas run --quick`               (wall target 15 s)
#   fixed     --precision off --time-budget 0.2 over the gpu suite at 256 MiB (the points >= 256 MiB
#             the default run has), to check that precision stopping agrees with a fixed budget
#   fixed2    the same again (with default/default2: each point's run-to-run spread)
#   planted   the staged/GPU-aware MPI and IPC points with COMMATLAS_TEST_SKIP_MOVE=1, 2 ranks on the
#             GPU: every byte-checked point must end as "data check failed", none as a bandwidth
# On a multi-GPU machine, CUDA_VISIBLE_DEVICES=0 makes it a one-GPU run.
# then the comparisons. Every run folder is packed into one tarball ($OUT returns 8 files at most).
# Usage (repository root): OUT=/some/dir [RUNS="default quick"] scripts/device/atlas_single_gpu.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the lent machines
W=$(mktemp -d)
exec > >(tee "$OUT/atlas.log") 2>&1

echo "== build ($(date -u +%FT%TZ))"
start=$(date +%s)
{ cmake -B build-atlas -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_BUILD_TESTS=OFF &&
  cmake --build build-atlas -j"$(nproc)"; } > "$W/build.log" 2>&1 || { tail -40 "$W/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
export COMMATLAS_ENGINE=$PWD/build-atlas/engine/commatlas-engine PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,clocks.max.mem --format=csv | tee "$W/nvidia-smi.csv"
$COMMATLAS_ENGINE info > "$W/engine-info.json"
python3 -m commatlas list > "$W/list.txt" 2>&1; tail -3 "$W/list.txt"

run() {  # run NAME LIMIT ARGS...: one `time commatlas run` into $W/NAME, stopped at LIMIT seconds
  local name=$1 limit=$2; shift 2
  echo "== commatlas run $* ($(date -u +%FT%TZ))"
  local t0; t0=$(date +%s.%N)
  # `time` as the issue measures it: the whole command, report included.
  { time timeout -s INT "$limit" python3 -m commatlas run --out "$W/$name" "$@" > "$W/$name.log" 2>&1; } 2> "$W/$name.time"
  local rc=$?
  local wall; wall=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
  echo "$name: rc=$rc wall=${wall}s"
  echo "$name $wall $rc $*" >> "$W/walls.txt"
  cp "$W/$name.log" "$W/$name/terminal.txt" 2>/dev/null
}

planted() {  # the MPI points of scripts/device/planted_noop.sh, with and without the switch
  local E=$COMMATLAS_ENGINE mode skip
  mkdir -p "$W/planted"
  for mode in real planted; do
    skip=0; [ "$mode" = planted ] && skip=1
    echo "== planted no-op, MPI paths, $mode ($(date -u +%FT%TZ))"
    COMMATLAS_TEST_SHARE_GPU=1 COMMATLAS_TEST_SKIP_MOVE=$skip timeout 90 mpirun --allow-run-as-root -n 2 \
      -x NCCL_NVLS_ENABLE -x COMMATLAS_TEST_SHARE_GPU -x COMMATLAS_TEST_SKIP_MOVE -x CUDA_VISIBLE_DEVICES "$E" run --mpi \
      --only 'mpi.staged.bandwidth,mpi.staged.pingpong,mpi.staged.bibw,mpi.staged.allreduce,mpi.gpu_aware.bandwidth,mpi.gpu_aware.pingpong,ipc.bandwidth' \
      --sizes 64K,64M --time-budget 0.01 --watchdog 30 --progress none --out "$W/planted/mpi-$mode.jsonl" > "$W/planted/mpi-$mode.log" 2>&1
    echo "mpi-$mode: rc=$?"
    python3 scripts/device/points_table.py "$W/planted/mpi-$mode.jsonl"
  done
}

RUNS=${RUNS:-default default2 quick fixed fixed2 planted}
for name in $RUNS; do
  case $name in
    default|default2) run "$name" 150 ;;
    quick) run quick 60 --quick ;;
    fixed|fixed2) run "$name" 150 --suite gpu --sizes 256M --precision off --time-budget 0.2 ;;
    planted) planted ;;
  esac
done

echo "== wall times (s): name wall rc args"
cat "$W/walls.txt"
for name in ${RUNS//planted/}; do
  python3 - "$W/$name/results.jsonl" "$name" <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
end = [r for r in recs if r.get("type") == "end"]
res = [r for r in recs if r.get("type") == "result"]
over = [r for r in res if (r.get("peak") or {}).get("fraction", 0) > 1.0]
print(sys.argv[2], "results", len(res), "errors", sum(r.get("type") == "error" for r in recs),
      "skips", sum(r.get("type") == "skip" for r in recs), "end wall_s", end[-1].get("wall_s") if end else None,
      "fractions > 1:", len(over))
EOF
done
echo "== default: the terminal summary's first screen"
head -40 "$W/default.log"
echo "== precision-stopped vs fixed budget, costs, projection"
python3 scripts/minute_report.py "$W/default" "$W/fixed" --spread-from "$W/default" "$W/default2" \
  --spread-from "$W/fixed" "$W/fixed2" > "$W/minute_report.txt" 2>&1
sed -n '/points >= 256/,/outside their limit/p' "$W/minute_report.txt" | cut -c1-70,91-
echo "== harness vs bare reference loops"
python3 scripts/device/points_table.py --harness-check "$W/default"
echo "== identical default runs: compare"
COLUMNS=100 python3 -m commatlas compare "$W/default" "$W/default2" --html "$W/compare.html" > "$W/compare.txt" 2>&1
tail -25 "$W/compare.txt"
for name in $RUNS; do
  tar czf "$OUT/$name.tar.gz" -C "$W" "$name"
done
tar czf "$OUT/logs.tar.gz" -C "$W" build.log list.txt engine-info.json nvidia-smi.csv walls.txt \
  minute_report.txt compare.txt compare.html default.log default2.log quick.log fixed.log fixed2.log 2>/dev/null
ls -la "$OUT"
exit 0
