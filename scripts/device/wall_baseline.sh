#!/usr/bin/env bash
# Wall time of `commatlas run` at this checkout against an earlier commit, on the same machine in
# the same call (a wall time from another call may come from a slower or busier VM: the same
# quick run read 17.0 s in one session and 18.6-21 s in the next on the same kind).
# BASE_TGZ is `git archive` of the earlier commit without results/ (in .device-carry/, carried).
# Runs, interleaved: --quick base, --quick head, --quick base, --quick head, then the default run
# base and head (DEFAULT=0 leaves those out). Prints each wall time; packs records into $OUT.
# Usage (repository root, .device-carry carried):
#   OUT=/some/dir BASE_TGZ=.device-carry/base-bc900bd.tgz bash scripts/device/wall_baseline.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
BASE_TGZ=${BASE_TGZ:?set BASE_TGZ to a git archive of the earlier commit}
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
W=$(mktemp -d)
exec > >(tee "$W/wall_baseline.log") 2>&1
start=$SECONDS
trap 'tar czf "$OUT/wall-baseline.tar.gz" -C "$W" --exclude="*/report.html" --exclude="*/answers.json" . 2>/dev/null' EXIT
CUDA_OMPI=/opt/ompi-cuda
tar xzf .device-carry/openmpi-4.1.4-cuda-ubuntu24.tgz -C /opt || exit 1
export OPAL_PREFIX=$CUDA_OMPI PATH=$CUDA_OMPI/bin:$PATH LD_LIBRARY_PATH=$CUDA_OMPI/lib:${LD_LIBRARY_PATH:-}
BASE=/tmp/commatlas-base
rm -rf "$BASE" && mkdir -p "$BASE" && tar xzf "$BASE_TGZ" -C "$BASE" || exit 1
build() {  # build SOURCE BUILD_DIR
  { cmake -S "$1" -B "$2" -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_WITH_CUDA=ON -DCOMMATLAS_WITH_NCCL=ON \
      -DCOMMATLAS_WITH_MPI=ON -DCOMMATLAS_BUILD_TESTS=OFF -DMPI_C_COMPILER=$CUDA_OMPI/bin/mpicc &&
    cmake --build "$2" -j32; } > "$W/build-$(basename "$2").log" 2>&1 || { tail -30 "$W/build-$(basename "$2").log"; exit 1; }
}
build "$PWD" "$PWD/build-head"
build "$BASE" "$BASE/build"
echo "builds: $((SECONDS - start)) s"

run() {  # run WHICH NAME ARGS...
  local which=$1 name=$2; shift 2
  local root=$PWD
  [ "$which" = base ] && root=$BASE
  local engine=$root/build-head/engine
  [ "$which" = base ] && engine=$BASE/build/engine
  echo "$name ($which): commatlas run --out $name $*" >> "$W/commands.txt"
  local t0; t0=$(date +%s.%N)
  COMMATLAS_ENGINE=$engine/commatlas-engine PYTHONPATH=$root/python PATH=$engine:$PATH PYTHONUNBUFFERED=1 \
    timeout -s INT 170 python3 -m commatlas run --out "$W/$name" "$@" > "$W/$name.log" 2>&1
  local rc=$?
  local wall; wall=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
  echo "$name $which $wall rc=$rc $*" | tee -a "$W/walls.txt"
}
run base quick-base-1 --quick
run head quick-head-1 --quick
run base quick-base-2 --quick
run head quick-head-2 --quick
if [ "${DEFAULT:-1}" = 1 ]; then
  run base default-base
  run head default-head
fi
echo "done: $((SECONDS - start)) s"
