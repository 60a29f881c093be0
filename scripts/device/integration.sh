#!/usr/bin/env bash
# End-to-end check on a GPU machine: build the engine, then drive it through the Python CLI
# (`commatlas run`: topology in the metadata, the single-process GPU phase, the one-rank-per-GPU
# MPI phase, the report) over a small selection.
# Usage: OUT=dir [ONLY=keys] [SIZES=list] [RUN_LIMIT=s] bash scripts/device/integration.sh
set -uo pipefail
export NCCL_NVLS_ENABLE=0
cd "$(dirname "$0")/../.."
start=$(date +%s)
{ cmake -B build-dev -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_BUILD_TESTS=OFF &&
  cmake --build build-dev -j16; } > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
export COMMATLAS_ENGINE=build-dev/engine/commatlas-engine PYTHONPATH=python PYTHONUNBUFFERED=1
only=${ONLY:-'gpu.copy_ce,gpu.copy_sm,gpu.copy_ce_matrix,gpu.copy_sm_matrix,ipc.*,nccl.pingpong,nccl.bandwidth,nccl.allreduce,reference.nccl_*'}
cmd=(python3 -m commatlas run --out "$OUT/run" --only "$only" --sizes "${SIZES:-8,256M}" --time-budget 0.05 --watchdog 30)
echo "${cmd[*]}" > "$OUT/command.txt"
timeout "${RUN_LIMIT:-170}" "${cmd[@]}" 2>&1 | tee "$OUT/run.log"
echo "exit: $? wall: $(( $(date +%s) - start )) s"
