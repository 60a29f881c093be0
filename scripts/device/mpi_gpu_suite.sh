#!/usr/bin/env bash
# Suite "mpi-gpu" on a 2-GPU device machine, against two MPI libraries:
#   image-ompi: the image's Open MPI 4.1.6, not CUDA-aware. GPU-aware benchmarks must be recorded
#               as skipped with the library's reason (never handed a device pointer). Quick sizes.
#   cuda-ompi:  the CUDA-aware Open MPI 4.1.4 of /work/shared/gpu-mpi (carried in .device-carry/).
#               Default sizes.
# plus the single-process NCCL benchmarks (nccl.single.*, suite nccl). Each run is bounded by
# `timeout` so the script always returns its records; the engine's watchdog bounds each point.
# Usage (repository root, .device-carry carried): OUT=/some/dir scripts/device/mpi_gpu_suite.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the lent machines
mkdir -p "$OUT"
exec > >(tee "$OUT/mpi_gpu_suite.log") 2>&1
CUDA_OMPI=/opt/ompi-cuda
BUDGET=${BUDGET:-0.1}
commands="$OUT/commands.txt"
: > "$commands"

phase() { echo; echo "== $* ($(date -u +%T))"; }
# Runs and records one command line, bounded by its own time limit.
run_logged() {
  local limit=$1; shift
  echo "timeout $limit $*" | tee -a "$commands"
  local start=$SECONDS
  timeout "$limit" "$@"
  local rc=$?
  echo "  -> rc=$rc in $((SECONDS - start)) s" | tee -a "$commands"
}

phase "machine"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
nvidia-smi topo -m
mpirun --version | head -1

phase "unpack the CUDA-aware Open MPI"
tar xzf .device-carry/openmpi-4.1.4-cuda-ubuntu24.tgz -C /opt && ls $CUDA_OMPI/bin/mpicc

phase "build twice, in parallel: image Open MPI and CUDA-aware Open MPI"
common=(-DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_WITH_CUDA=ON -DCOMMATLAS_WITH_NCCL=ON -DCOMMATLAS_WITH_MPI=ON
        -DCOMMATLAS_BUILD_TESTS=OFF)
( cmake -B build-dev-image-ompi "${common[@]}" -DMPI_C_COMPILER=$(command -v mpicc) > /tmp/build-image.log 2>&1 &&
  cmake --build build-dev-image-ompi -j16 >> /tmp/build-image.log 2>&1; echo "image build rc=$?" ) &
image_build=$!
( export OPAL_PREFIX=$CUDA_OMPI PATH=$CUDA_OMPI/bin:$PATH LD_LIBRARY_PATH=$CUDA_OMPI/lib:${LD_LIBRARY_PATH:-}
  cmake -B build-dev-cuda-ompi "${common[@]}" -DMPI_C_COMPILER=$CUDA_OMPI/bin/mpicc > /tmp/build-cuda.log 2>&1 &&
  cmake --build build-dev-cuda-ompi -j16 >> /tmp/build-cuda.log 2>&1; echo "cuda build rc=$?" ) &
cuda_build=$!
# Wait for the two builds by pid: a bare `wait` also waits for the tee of `exec > >(tee ...)`,
# which never ends (that hang cost the first H200 run its whole time limit).
wait "$image_build" "$cuda_build"
grep -E "error|commatlas: MPI" /tmp/build-image.log | head -20
grep -E "error|commatlas: MPI" /tmp/build-cuda.log | head -20
IMAGE_ENGINE=$PWD/build-dev-image-ompi/engine/commatlas-engine
CUDA_ENGINE=$PWD/build-dev-cuda-ompi/engine/commatlas-engine
ls -la "$IMAGE_ENGINE" "$CUDA_ENGINE" || exit 1

phase "image Open MPI 4.1.6 (not CUDA-aware): info, then --suite mpi-gpu,mpi --quick"
mpirun --allow-run-as-root -n 1 "$IMAGE_ENGINE" info --json --mpi > "$OUT/info-image-ompi.json"
grep -o '"cuda_aware[^,]*,[^}]*' "$OUT/info-image-ompi.json"
run_logged "${IMAGE_LIMIT:-100}" mpirun --allow-run-as-root -n 2 -x NCCL_NVLS_ENABLE "$IMAGE_ENGINE" run --mpi \
  --suite mpi-gpu,mpi --quick --watchdog 60 --progress none --out "$OUT/image-ompi-quick.jsonl"

phase "CUDA-aware Open MPI 4.1.4: info, then --suite mpi-gpu,mpi at default sizes, in three bounded parts"
(
  export OPAL_PREFIX=$CUDA_OMPI PATH=$CUDA_OMPI/bin:$PATH LD_LIBRARY_PATH=$CUDA_OMPI/lib:${LD_LIBRARY_PATH:-}
  ompi_info --parsable --all 2>/dev/null | grep mpi_built_with_cuda_support
  mpirun --allow-run-as-root -n 1 "$CUDA_ENGINE" info --json --mpi > "$OUT/info-cuda-ompi.json"
  grep -o '"cuda_aware[^,]*,[^}]*' "$OUT/info-cuda-ompi.json"
  launch=(mpirun --allow-run-as-root -n 2 -x NCCL_NVLS_ENABLE -x OPAL_PREFIX -x LD_LIBRARY_PATH -x PATH "$CUDA_ENGINE" run
          --mpi --suite mpi-gpu,mpi --time-budget "$BUDGET" --watchdog 60 --progress none --out "$OUT/cuda-ompi.jsonl")
  run_logged "${NCCL_LIMIT:-130}" "${launch[@]}" --only 'nccl.*,reference.nccl_*'
  run_logged "${IPC_LIMIT:-50}" "${launch[@]}" --only 'ipc.*'
  run_logged "${MPI_LIMIT:-140}" "${launch[@]}" --exclude 'nccl.*,reference.nccl_*,ipc.*'
)

phase "single process driving both GPUs: nccl.single.*"
run_logged "${SINGLE_LIMIT:-50}" "$IMAGE_ENGINE" run --only 'nccl.single.*' --time-budget "$BUDGET" --watchdog 60 \
  --progress none --out "$OUT/single-process.jsonl"

phase "summary"
for f in "$OUT"/*.jsonl; do
  echo "$f: $(grep -c '"type":"result"' "$f") results, $(grep -c '"type":"skip"' "$f") skips, $(grep -c '"type":"error"' "$f") errors"
  grep '"type":"error"' "$f" | head -5 | cut -c1-400
done
