#!/usr/bin/env bash
# What the harness adds to NCCL: nccl.allreduce and nccl.bandwidth next to their bare nccl-tests-style
# loops (reference.nccl_*), one rank per GPU, at 8 B and 256 MiB, three runs in a row for the spread.
# Usage: OUT=dir bash scripts/device/nccl_overhead.sh   (needs >= 2 GPUs and the image's MPI)
set -uo pipefail
export NCCL_NVLS_ENABLE=0
cd "$(dirname "$0")/../.."
{ cmake -B build-dev -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_BUILD_TESTS=OFF &&
  cmake --build build-dev -j16; } > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
export COMMATLAS_ENGINE=build-dev/engine/commatlas-engine PYTHONPATH=python PYTHONUNBUFFERED=1
ranks=${RANKS:-$(nvidia-smi -L | wc -l)}
for i in 1 2 3; do
  cmd=(python3 -m commatlas run --out "$OUT/overhead-$i" --only 'nccl.allreduce,nccl.bandwidth,reference.nccl_*'
       --ranks "$ranks" --sizes 8,256M --watchdog 60)
  echo "${cmd[*]}" | tee -a "$OUT/overhead-command.txt"
  timeout 120 "${cmd[@]}" > "$OUT/overhead-$i.log" 2>&1; echo "run $i: exit $?"
done
