#!/usr/bin/env bash
# No behaviour change, shown on a GPU machine in one call: the same default `commatlas run` with the
# engine and package of BEFORE (a `git archive` tarball of the tree before a reshaping) and of this
# tree, on one machine, then `commatlas compare` of before against after, and of after against a
# second identical after run (what the machine's own noise looks like with today's rule).
#   git archive --format=tar.gz -o .device-carry/before.tar.gz <commit>
#   OUT=/some/dir BEFORE=.device-carry/before.tar.gz [AFTER_RUNS=after] scripts/device/reshape_same.sh
#   (carry .device-carry)
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
BEFORE=${BEFORE:-.device-carry/before.tar.gz}
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
W=$(mktemp -d)
start=$SECONDS
phase() { echo; echo "== $* (t=$((SECONDS - start)) s, $(date -u +%T))"; }
trap 'tar czf "$OUT/reshape-same.tar.gz" -C "$W" --exclude=report.html --exclude="*.html" --exclude="build*" . 2>/dev/null' EXIT

tar xzf .device-carry/openmpi-4.1.4-cuda-ubuntu24.tgz -C /opt || exit 1
export OPAL_PREFIX=/opt/ompi-cuda PATH=/opt/ompi-cuda/bin:$PATH LD_LIBRARY_PATH=/opt/ompi-cuda/lib:${LD_LIBRARY_PATH:-}
mkdir -p "$W/before-src" && tar xzf "$BEFORE" -C "$W/before-src" || exit 1
build() {  # source folder, build folder
  cmake -S "$1" -B "$2" -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_WITH_CUDA=ON -DCOMMATLAS_WITH_NCCL=ON \
    -DCOMMATLAS_WITH_MPI=ON -DCOMMATLAS_BUILD_TESTS=OFF -DMPI_C_COMPILER=/opt/ompi-cuda/bin/mpicc > "$2.log" 2>&1 &&
    cmake --build "$2" -j"$(nproc)" >> "$2.log" 2>&1
}
phase "build before and after"
build "$W/before-src" "$W/build-before" & b1=$!
build "$PWD" "$PWD/build-after" & b2=$!
wait $b1 || { tail -30 "$W/build-before.log"; exit 1; }
wait $b2 || { tail -30 "$PWD/build-after.log"; exit 1; }
cp "$PWD/build-after.log" "$W/build-after.log"

run() {  # name, engine, python package root
  phase "default run: $1"
  echo "COMMATLAS_ENGINE=$2 PYTHONPATH=$3 python3 -m commatlas run --out $1" >> "$W/commands.txt"
  local t0=$SECONDS
  COMMATLAS_ENGINE=$2 PYTHONPATH=$3 PYTHONUNBUFFERED=1 timeout -s INT 150 python3 -m commatlas run --out "$W/$1" \
    > "$W/$1.log" 2>&1
  echo "$1: rc=$? wall=$((SECONDS - t0)) s"
}
run before "$W/build-before/engine/commatlas-engine" "$W/before-src/python"
AFTER_RUNS=${AFTER_RUNS:-after after2}  # "after" alone when device time is short
for name in $AFTER_RUNS; do run "$name" "$PWD/build-after/engine/commatlas-engine" "$PWD/python"; done

pairs=("before after")
[[ " $AFTER_RUNS " == *" after2 "* ]] && pairs+=("after after2")
for pair in "${pairs[@]}"; do
  set -- $pair
  phase "compare $1 $2"
  PYTHONPATH=$PWD/python python3 -m commatlas compare "$W/$1" "$W/$2" --html "$W/compare-$1-$2.html" > "$W/compare-$1-$2.txt" 2>&1
  echo "rc=$?"; grep -i -E "no change|changed|winner" "$W/compare-$1-$2.txt" | head -8
done
phase "done"
