#!/usr/bin/env bash
# Does the default run stay short and agree with a fixed budget? On one GPU (H100 or H200), back to
# back: build for sm_90, then `time commatlas run` (default: precision-stopped), `--quick`, and
# `--precision off --time-budget 0.2` (the fixed budget), each into $OUT; then the comparison of
# points >= 256 MiB, the per-point cost summary and the projection to 4 and 8 GPUs
# (scripts/minute_report.py).
# Usage (repository root): OUT=/some/dir scripts/device/minute.sh     (~4 minutes)
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the lent machines
mkdir -p "$OUT"
exec > >(tee "$OUT/minute.log") 2>&1

echo "== build ($(date -u +%FT%TZ))"
start=$(date +%s)
{ cmake -B build-minute -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_BUILD_TESTS=OFF &&
  cmake --build build-minute -j16; } > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
# The device has numpy/matplotlib/jinja2/rich but no registry: run the CLI from the tree.
export COMMATLAS_ENGINE=build-minute/engine/commatlas-engine PYTHONPATH=python PYTHONUNBUFFERED=1
python3 -c "import rich" || { echo "rich missing: the CLI cannot run"; exit 1; }
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,clocks.max.mem --format=csv | tee "$OUT/nvidia-smi-gpus.csv"
$COMMATLAS_ENGINE info > "$OUT/engine-info.json"
python3 -m commatlas list > "$OUT/list.txt" 2>&1; tail -3 "$OUT/list.txt"

run() {  # run NAME ARGS...: one timed `commatlas run` into $OUT/NAME
  local name=$1; shift
  echo "== commatlas run $* ($(date -u +%FT%TZ))"
  local t0; t0=$(date +%s.%N)
  # `time` as the issue measures it: the whole command, report included.
  { time python3 -m commatlas run --out "$OUT/$name" --watchdog 60 "$@" > "$OUT/$name.log" 2>&1; } 2> "$OUT/$name.time"
  local rc=$?
  local wall; wall=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
  echo "$name: rc=$rc wall=${wall}s ($(grep real "$OUT/$name.time"))"
  echo "$name $wall $rc" >> "$OUT/walls.txt"
  grep -E "error|FAILED|skipped|results" "$OUT/$name.log" | tail -4
}

run default
run quick --quick
run fixed --precision off --time-budget 0.2

echo "== wall times (s): name wall rc"
cat "$OUT/walls.txt"
for name in default quick fixed; do
  python3 -c "
import json,sys
end=[json.loads(l) for l in open(sys.argv[1]) if '\"type\":\"end\"' in l][-1]
print(sys.argv[2], 'end record wall_s', end['wall_s'], 'stop reasons', end.get('stop_reasons'))
" "$OUT/$name/results.jsonl" "$name"
done
echo "== comparison, costs, projection"
python3 scripts/minute_report.py "$OUT/default" "$OUT/fixed" | tee "$OUT/minute_report.txt"
tar czf "$OUT/logs.tar.gz" -C "$OUT" build.log default.log quick.log fixed.log 2>/dev/null
exit 0
