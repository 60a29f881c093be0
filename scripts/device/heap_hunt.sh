#!/usr/bin/env bash
# The CUDA IPC workload's heap death: glibc's "munmap_chunk(): invalid pointer" inside
# MPI_Comm_free, when a variant's workload is torn down (1 of 7 `ipc.pingpong` jobs alone on 2x H100,
# figures-that-hold-17). Open MPI 4.1.4's frame is infosubscriber_destruct, freeing the strdup'd
# default value of one of the communicator's info subscriptions: a small chunk whose size field
# something overwrote. Found in session 27 (figures-that-hold-19): driver 580's NVML writes one
# element past the field array of the wire check's read; the engine now leaves room behind it
# (engine/topology/nvml_library.cpp), and 0 of 30 jobs died after 3 of 20 before. AddressSanitizer
# cannot see it: NVML is not instrumented, and its write lands in a redzone. This repeats the job
# that died, alone, JOBS times, and keeps what each death leaves:
#   plain  this checkout built RelWithDebInfo on glibc's heap: a core per death, read by cuda-gdb
#          (the device image has no gdb): the backtrace with the engine's lines, the chunk that
#          failed and the bytes before it (what overran into its size field)
#   asan   (ASAN_JOBS > 0) the same jobs built with AddressSanitizer (host code): its report names
#          the first bad access where our code made it
# Usage (repository root, .device-carry carried):
#   OUT=/some/dir [JOBS=16] [ASAN_JOBS=0] [ONLY=ipc.pingpong] [DEADLINE=480] bash scripts/device/heap_hunt.sh
set -uo pipefail
source scripts/device/work_folder.sh heap_hunt
start=$SECONDS
DEADLINE=${DEADLINE:-480}
ONLY=${ONLY:-ipc.pingpong}
CUDA_OMPI=/opt/ompi-cuda
tar xzf .device-carry/openmpi-4.1.4-cuda-ubuntu24.tgz -C /opt || exit 1
export OPAL_PREFIX=$CUDA_OMPI PATH=$CUDA_OMPI/bin:$PATH LD_LIBRARY_PATH=$CUDA_OMPI/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=index,name,driver_version --format=csv

build() {  # build DIR EXTRA_CMAKE_ARGS...
  local dir=$1
  shift
  { cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_WITH_CUDA=ON \
      -DCOMMATLAS_WITH_NCCL=ON -DCOMMATLAS_WITH_MPI=ON -DCOMMATLAS_BUILD_TESTS=OFF \
      -DMPI_C_COMPILER=$CUDA_OMPI/bin/mpicc "$@" &&
    cmake --build "$dir" -j16; } > "$W/build-$(basename "$dir").log" 2>&1 ||
    { tail -30 "$W/build-$(basename "$dir").log"; return 1; }
}
t0=$SECONDS
build build-hunt &
plain_build=$!
if [ "${ASAN_JOBS:-0}" -gt 0 ]; then
  build build-hunt-asan -DCMAKE_CXX_FLAGS="-fsanitize=address -fno-omit-frame-pointer" \
    -DCMAKE_CUDA_FLAGS="-Xcompiler=-fsanitize=address,-fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address &
  asan_build=$!
  wait "$asan_build" || ASAN_JOBS=0
fi
wait "$plain_build" || exit 1
echo "builds: $((SECONDS - t0)) s"

# Cores where this script can read them; Open MPI's handler prints its backtrace, then re-raises.
mkdir -p "$W/cores"
ulimit -c unlimited
echo "$W/cores/core.%p" > /proc/sys/kernel/core_pattern 2>/dev/null || echo "core_pattern not writable: $(cat /proc/sys/kernel/core_pattern)"

# One job as check-order runs it alone: the engine under mpiexec, one rank per GPU.
job() {  # job BUILD NAME [ENV...]
  local build=$1 name=$2
  shift 2
  local t=$SECONDS
  env "$@" mpiexec --allow-run-as-root --map-by slot:PE=16 --bind-to core -n 2 \
    "$build/engine/commatlas-engine" run --mpi --out "$W/$name.jsonl" --only "$ONLY" --progress json \
    > "$W/$name.log" 2>&1
  local rc=$?
  local dead
  dead=$(grep -c -E "invalid pointer|corrupted|free\(\)|double free|Signal:|AddressSanitizer" "$W/$name.log")
  echo "$name: rc=$rc $((SECONDS - t)) s, death lines: $dead" | tee -a "$W/jobs.txt"
}
for k in $(seq 1 "${JOBS:-16}"); do
  [ $((SECONDS - start)) -gt "$DEADLINE" ] && { echo "plain $k: not run, the deadline is near"; break; }
  job build-hunt "plain-$k"
done
for k in $(seq 1 "${ASAN_JOBS:-0}"); do
  [ $((SECONDS - start)) -gt "$DEADLINE" ] && { echo "asan $k: not run, the deadline is near"; break; }
  mkdir -p "$W/asan"
  job build-hunt-asan "asan-$k" "ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0:log_path=$W/asan/asan-$k"
done

# Each core (the first three): where it died, and the failing chunk. In infosubscriber_destruct
# the list item being released is in rbx; its default_value (the pointer free() refused) follows
# the opal_list_item_t (object 16 bytes, next, prev, item_free: offset 0x28).
cat > "$W/core.gdb" <<'EOF'
set pagination off
set print pretty off
bt
frame function infosubscriber_destruct
info registers rbx r12 r13
x/8gx $rbx
set $dv = *(unsigned long *)($rbx + 0x28)
printf "default_value %#lx\n", $dv
x/s $dv
printf "the 0x80 bytes before the chunk, then the chunk header and data\n"
x/24gx $dv - 0x90
x/16s $dv - 0x90
EOF
n=0
for core in "$W"/cores/core.*; do
  [ -f "$core" ] || continue
  n=$((n + 1))
  [ "$n" -gt 3 ] && break
  echo "== $core ($(du -h "$core" | cut -f1))"
  timeout 120 cuda-gdb -batch -x "$W/core.gdb" build-hunt/engine/commatlas-engine "$core" 2>&1 | tail -80 |
    tee "$W/gdb-$(basename "$core").txt"
done
rm -f "$W"/cores/core.*
for f in "$W"/asan/*; do
  [ -f "$f" ] || continue
  echo "== $f"
  grep -m1 -A40 "ERROR: AddressSanitizer" "$f"
done
echo "deaths: $(grep -c -v 'death lines: 0' "$W/jobs.txt") of $(wc -l < "$W/jobs.txt") jobs; total $((SECONDS - start)) s"
