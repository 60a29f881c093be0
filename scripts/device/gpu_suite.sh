#!/usr/bin/env bash
# The single-process GPU suite on a device machine: build for Hopper, record the topology, run
# `--suite gpu` (default sweep, or quick with QUICK=1), and leave logs and records in $OUT.
# Usage (repository root): OUT=/some/dir [QUICK=1] [ONLY=gpu.copy_sm_shapes] scripts/device/gpu_suite.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the lent machines
mkdir -p "$OUT"
exec > >(tee "$OUT/gpu_suite.log") 2>&1

echo "== build ($(date -u +%FT%TZ))"
start=$(date +%s)
cmake -B build-dev-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_WITH_MPI=OFF > "$OUT/cmake-configure.log" 2>&1 \
  && cmake --build build-dev-gpu -j16 > "$OUT/cmake-build.log" 2>&1
rc=$?
echo "build rc=$rc in $(( $(date +%s) - start )) s"
if [ $rc -ne 0 ]; then tail -40 "$OUT/cmake-build.log"; exit $rc; fi
ENGINE=build-dev-gpu/engine/commatlas-engine

echo "== nvidia-smi topo -m"
nvidia-smi topo -m 2>&1 | tee "$OUT/nvidia-smi-topo.txt"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,clocks.max.mem --format=csv 2>&1 | tee "$OUT/nvidia-smi-gpus.csv"
echo "== commatlas-engine topo"
$ENGINE topo > "$OUT/engine-topo.json" 2> "$OUT/engine-topo.err"; echo "topo rc=$?"
head -c 4000 "$OUT/engine-topo.json"; echo

args=(run --suite gpu --out "$OUT/gpu-suite.jsonl" --progress text)
[ "${QUICK:-0}" = 1 ] && args+=(--quick)
[ -n "${ONLY:-}" ] && args+=(--only "$ONLY")
echo "== $ENGINE ${args[*]}"
echo "$ENGINE ${args[*]}" > "$OUT/command.txt"
start=$(date +%s)
$ENGINE "${args[@]}" 2> "$OUT/progress.log"
rc=$?
wall=$(( $(date +%s) - start ))
echo "suite rc=$rc wall=${wall}s" | tee -a "$OUT/command.txt"
tail -3 "$OUT/progress.log"
grep -E "error|FAILED" "$OUT/progress.log" | head -30
exit $rc
