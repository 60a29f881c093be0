#!/usr/bin/env bash
# One device call on nvidia-h100-x2: the MPI libraries side by side on host buffers (the image's
# Open MPI 4.1.6, the carried CUDA-aware Open MPI 4.1.4, the carried Debian MPICH 4.0.2; see
# scripts/device/mpi_libraries.sh), then, with the CUDA-aware engine that script built, a default
# `commatlas run` and a `--quick` run for their wall times (GPU-aware MPI under the CUDA-aware
# Open MPI is part of the default run).
#   OUT=/some/dir scripts/device/libraries_and_wall.sh      (carry .device-carry)
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
W=$(mktemp -d)
start=$SECONDS
trap 'tar czf "$OUT/runs.tar.gz" -C "$W" --exclude=report.html . 2>/dev/null' EXIT

echo "== MPI libraries (t=$((SECONDS - start)) s)"
mkdir -p "$W/mpi-libraries"
OUT="$W/mpi-libraries" SUITES=mpi BUDGET=0.05 LIMIT=200 timeout 330 bash scripts/device/mpi_libraries.sh \
  > "$W/mpi-libraries.log" 2>&1
echo "rc=$?"; grep -E "^== |^    |rc=|built in" "$W/mpi-libraries.log"; cat "$W/mpi-libraries/figures.md" 2>/dev/null

engine=$(ls -d "$PWD"/build-libs/opt_ompi-cuda_bin_mpicc/engine/commatlas-engine 2>/dev/null)
[ -x "$engine" ] || { echo "no CUDA-aware engine was built"; exit 1; }
export OPAL_PREFIX=/opt/ompi-cuda PATH=/opt/ompi-cuda/bin:$PATH LD_LIBRARY_PATH=/opt/ompi-cuda/lib:${LD_LIBRARY_PATH:-}
export COMMATLAS_ENGINE=$engine PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
for mode in default quick; do
  echo "== $mode run (t=$((SECONDS - start)) s)"
  args=(); [ "$mode" = quick ] && args=(--quick)
  t0=$SECONDS
  timeout -s INT 170 python3 -m commatlas run "${args[@]}" --out "$W/$mode" > "$W/$mode.log" 2>&1
  echo "$mode: rc=$? wall=$((SECONDS - t0)) s"; tail -4 "$W/$mode.log"
done
echo "== done (t=$((SECONDS - start)) s)"
