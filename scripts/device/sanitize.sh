#!/usr/bin/env bash
# A heap fault hunt on the device in one call: build the engine with AddressSanitizer (host code,
# .cpp and the host side of .cu) against the CUDA-aware Open MPI carried in .device-carry/, for this
# checkout and optionally for an earlier commit (BASE_TGZ, a `git archive` without results/), then
# run the same `commatlas run` subset ROUNDS times on each, in turn. ASan's reports land beside
# each job's log; a job that ends in a report names the first bad access and where its memory came
# from, where glibc would only abort at exit ("free(): invalid size") long after the write.
# Open MPI and the CUDA runtime are not instrumented: ASan sees their writes only through libc's
# intercepted calls (memcpy, memset), so a clean run here clears our code more than theirs.
# Usage (repository root, .device-carry carried):
#   OUT=/some/dir [BASE_TGZ=.device-carry/b-REV.tgz] [ROUNDS=3] [DEADLINE=500] \
#     RUN_ARGS="--only mpi.bandwidth,mpi.staged.bandwidth --sizes 1M,16M" bash scripts/device/sanitize.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
RUN_ARGS=${RUN_ARGS:?set RUN_ARGS to the commatlas run options of each job}
DEADLINE=${DEADLINE:-500}
source scripts/device/work_folder.sh sanitize
start=$SECONDS
CUDA_OMPI=/opt/ompi-cuda
tar xzf .device-carry/openmpi-4.1.4-cuda-ubuntu24.tgz -C /opt || exit 1
export OPAL_PREFIX=$CUDA_OMPI PATH=$CUDA_OMPI/bin:$PATH LD_LIBRARY_PATH=$CUDA_OMPI/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=index,name,driver_version --format=csv | tee "$W/nvidia-smi.csv"

TREES=(head)
# shellcheck disable=SC2034 # read through ROOT_$t
ROOT_head=$PWD
if [ -n "${BASE_TGZ:-}" ]; then
  ROOT_base=/tmp/commatlas-sanitize-base
  rm -rf "$ROOT_base" && mkdir -p "$ROOT_base" && tar xzf "$BASE_TGZ" -C "$ROOT_base" || exit 1
  TREES=(base head)
fi
asan=(-fsanitize=address -fno-omit-frame-pointer)
for t in "${TREES[@]}"; do
  root_var=ROOT_$t
  root=${!root_var}
  t0=$SECONDS
  { cmake -S "$root" -B "$root/build-asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DCOMMATLAS_WITH_CUDA=ON -DCOMMATLAS_WITH_NCCL=ON -DCOMMATLAS_WITH_MPI=ON -DCOMMATLAS_BUILD_TESTS=OFF \
      -DMPI_C_COMPILER=$CUDA_OMPI/bin/mpicc -DCMAKE_CXX_FLAGS="${asan[*]}" \
      -DCMAKE_CUDA_FLAGS="-Xcompiler=-fsanitize=address,-fno-omit-frame-pointer" \
      -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address &&
    cmake --build "$root/build-asan" -j"$(nproc)"; } > "$W/build-$t.log" 2>&1 || { tail -30 "$W/build-$t.log"; exit 1; }
  echo "build $t: $((SECONDS - t0)) s"
done

# The CUDA runtime maps memory where ASan keeps its shadow gap; leaks at exit are Open MPI's and
# the driver's, not what is hunted here. One report file per process (log_path adds the pid).
mkdir -p "$W/asan"
for k in $(seq 1 "${ROUNDS:-3}"); do
  for t in "${TREES[@]}"; do
    if [ $((SECONDS - start)) -gt "$DEADLINE" ]; then echo "round $k $t: not run, the deadline is near"; continue; fi
    root_var=ROOT_$t
    root=${!root_var}
    name=$t-$k
    echo "$name: commatlas run --out $name $RUN_ARGS" >> "$W/commands.txt"
    t0=$SECONDS
    # shellcheck disable=SC2086 # RUN_ARGS is a list of words
    ASAN_OPTIONS="protect_shadow_gap=0:detect_leaks=0:log_path=$W/asan/$name" \
      COMMATLAS_ENGINE=$root/build-asan/engine/commatlas-engine PYTHONPATH=$root/python \
      PATH=$root/build-asan/engine:$PATH PYTHONUNBUFFERED=1 \
      timeout -s INT 150 python3 -m commatlas run --out "$W/$name" $RUN_ARGS > "$W/$name.log" 2>&1
    rc=$?
    reports=$(find "$W/asan" -name "$name.*" | wc -l)
    aborts=$(zcat -f "$W/$name"/engine.log* 2>/dev/null | grep -c -E "corrupted|free\(\)|AddressSanitizer|Signal:")
    echo "$name: rc=$rc $((SECONDS - t0)) s, asan reports: $reports, abort lines in engine.log: $aborts" | tee -a "$W/jobs.txt"
  done
done
for f in "$W"/asan/*; do
  [ -f "$f" ] || continue
  echo "== $f"; grep -m1 -A30 "ERROR: AddressSanitizer" "$f"
done
echo "total $((SECONDS - start)) s"
