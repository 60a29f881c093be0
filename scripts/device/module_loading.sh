#!/usr/bin/env bash
# What CUDA_MODULE_LOADING=EAGER (set by the engine at its start, engine/app/main.cpp) costs each
# process that makes a CUDA context: under EAGER every module of the process is loaded then, NCCL's
# and NVSHMEM's kernels included. Times, ROUNDS times (3) and interleaved: the start-up query `info`,
# a one-point engine run on one GPU (gpu.copy_ce 4 KiB), and a one-point MPI job on both GPUs
# (mpi.gpu_aware.pingpong 8 B), each with EAGER (the engine's default) and LAZY (set by the caller,
# which the engine keeps).
# Run from the repository root. Needs a built engine (ENGINE) and the carried Open MPI unpacked in /opt/ompi-cuda.
#   OUT=/some/dir ENGINE=build-head/engine/commatlas-engine bash scripts/device/module_loading.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives the times}
ENGINE=${ENGINE:?set ENGINE to a built commatlas-engine}
export OPAL_PREFIX=/opt/ompi-cuda PATH=/opt/ompi-cuda/bin:$PATH LD_LIBRARY_PATH=/opt/ompi-cuda/lib:${LD_LIBRARY_PATH:-}
MPIEXEC=(mpiexec --allow-run-as-root --map-by slot:PE=16 --bind-to core -n 2 -x CUDA_MODULE_LOADING)
W=$(mktemp -d)
source scripts/device/timed.sh
for round in $(seq 1 "${ROUNDS:-3}"); do
  echo "-- round $round"
  for loading in EAGER LAZY; do
    export CUDA_MODULE_LOADING=$loading
    timed "$loading engine info" "$ENGINE" info --json
    timed "$loading engine run gpu.copy_ce 4 KiB" "$ENGINE" run --only gpu.copy_ce --sizes 4096 --time-budget 0.01 --out "$W/one.jsonl"
    timed "$loading MPI job mpi.gpu_aware.pingpong 8 B" "${MPIEXEC[@]}" "$ENGINE" run --mpi --only mpi.gpu_aware.pingpong \
      --sizes 8 --out "$W/two.jsonl"
  done
done | tee "$OUT/module-loading.txt"
