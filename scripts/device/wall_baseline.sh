#!/usr/bin/env bash
# Wall time of `commatlas run` at this checkout against an earlier commit, on the same machine in
# the same call (a wall time from another call may come from a slower or busier VM: the same
# quick run read 17.0 s in one session and 18.6-21 s in the next on the same kind).
# BASE_TGZ is `git archive` of the earlier commit without results/ (in .device-carry/, carried).
# Runs, interleaved: --quick base, --quick head, QUICK_ROUNDS times (2), then the default run base
# and head, DEFAULT_ROUNDS times (1; DEFAULT=0 leaves them out). With two default rounds, compare
# judges each side's two identical runs. Prints each wall time, and each phase's (run_phases.py);
# packs records into $OUT.
# Usage (repository root, .device-carry carried):
#   OUT=/some/dir BASE_TGZ=.device-carry/base-bc900bd.tgz bash scripts/device/wall_baseline.sh
# BASE_TGZ=none runs head alone (the guard's wall times and compare on another machine).
# QUICK_ARGS replaces --quick in the interleaved loop (e.g. QUICK_ARGS="--only host.memcpy" DEFAULT=0:
# fresh jobs of one family, base and head in turn, for a change that shows from job to job).
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
BASE_TGZ=${BASE_TGZ:?set BASE_TGZ to a git archive of the earlier commit}
source scripts/device/work_folder.sh wall_baseline
start=$SECONDS
CUDA_OMPI=/opt/ompi-cuda
tar xzf .device-carry/openmpi-4.1.4-cuda-ubuntu24.tgz -C /opt || exit 1
export OPAL_PREFIX=$CUDA_OMPI PATH=$CUDA_OMPI/bin:$PATH LD_LIBRARY_PATH=$CUDA_OMPI/lib:${LD_LIBRARY_PATH:-}
BASE=/tmp/commatlas-base
if [ "$BASE_TGZ" != none ]; then
  rm -rf "$BASE" && mkdir -p "$BASE" && tar xzf "$BASE_TGZ" -C "$BASE" || exit 1
fi
build() {  # build SOURCE BUILD_DIR
  { cmake -S "$1" -B "$2" -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_WITH_CUDA=ON -DCOMMATLAS_WITH_NCCL=ON \
      -DCOMMATLAS_WITH_MPI=ON -DCOMMATLAS_BUILD_TESTS=OFF -DMPI_C_COMPILER=$CUDA_OMPI/bin/mpicc &&
    cmake --build "$2" -j32; } > "$W/build-$(basename "$2").log" 2>&1 || { tail -30 "$W/build-$(basename "$2").log"; exit 1; }
}
build "$PWD" "$PWD/build-head"
[ "$BASE_TGZ" = none ] || build "$BASE" "$BASE/build"
echo "builds: $((SECONDS - start)) s"

run() {  # run WHICH NAME ARGS...
  local which=$1 name=$2; shift 2
  [ "$which" = base ] && [ "$BASE_TGZ" = none ] && return
  local root=$PWD
  [ "$which" = base ] && root=$BASE
  local engine=$root/build-head/engine
  [ "$which" = base ] && engine=$BASE/build/engine
  echo "$name ($which): commatlas run --out $name $*" >> "$W/commands.txt"
  local t0; t0=$(date +%s.%N)
  # Through scripts/run_phases.py where that side has it: the log ends with where the wall time
  # went (imports, the engine's start-up queries, each phase, the summary, the report).
  local cli=(-m commatlas)
  [ -f "$root/scripts/run_phases.py" ] && cli=("$root/scripts/run_phases.py")
  COMMATLAS_ENGINE=$engine/commatlas-engine PYTHONPATH=$root/python PATH=$engine:$PATH PYTHONUNBUFFERED=1 \
    timeout -s INT 170 python3 "${cli[@]}" run --out "$W/$name" "$@" > "$W/$name.log" 2>&1
  local rc=$?
  local wall; wall=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
  echo "$name $which $wall rc=$rc $*" | tee -a "$W/walls.txt"
}
for k in $(seq 1 "${QUICK_ROUNDS:-2}"); do
  # shellcheck disable=SC2086 # QUICK_ARGS is a list of words
  run base "quick-base-$k" ${QUICK_ARGS:---quick}
  # shellcheck disable=SC2086
  run head "quick-head-$k" ${QUICK_ARGS:---quick}
done
rounds=${DEFAULT_ROUNDS:-1}
[ "${DEFAULT:-1}" = 1 ] || rounds=0
for k in $(seq 1 "$rounds"); do
  run base "default-base-$k"
  run head "default-head-$k"
done
# KEEP_HEAD_DEFAULT=DIR keeps head's first default run where order_check.sh's REUSE_BASE=1 looks
# for it (DIR=build-head/base-run with BUILD=build-head), so a next call on the still-warm machine
# checks order against it without a default run of its own.
if [ -n "${KEEP_HEAD_DEFAULT:-}" ] && [ -d "$W/default-head-1" ]; then
  rm -rf "$KEEP_HEAD_DEFAULT" && mkdir -p "$KEEP_HEAD_DEFAULT" &&
    cp -r "$W/default-head-1" "$KEEP_HEAD_DEFAULT/default" && cp "$W/default-head-1.log" "$KEEP_HEAD_DEFAULT/default.log" &&
    grep "^default-head-1 " "$W/walls.txt" > "$KEEP_HEAD_DEFAULT/default.time"
fi
# Two identical default runs of each side: compare's verdict on them is its false-alarm rate on
# this machine (the report it writes stays out of the tarball).
for which in base head; do
  if [ -d "$W/default-$which-1" ] && [ -d "$W/default-$which-2" ]; then
    root=$PWD; [ "$which" = base ] && root=$BASE
    PYTHONPATH=$root/python python3 -m commatlas compare "$W/default-$which-1" "$W/default-$which-2" \
      > "$W/compare-$which.txt" 2>&1
    echo "compare $which (rc=$?): $(grep -m1 'changed beyond' "$W/compare-$which.txt")"
    rm -f "$W/default-$which-2/compare.html"
  fi
done
# Where each run's wall time went, one line per run and span (from run_phases.py's time line).
for log in "$W"/quick-*.log "$W"/default-*.log; do
  [ -f "$log" ] || continue
  awk -v run="$(basename "$log" .log)" '/^ *[0-9.]+ +[0-9.]+ +[0-9.]+  / {printf "%-16s %6s %s\n", run, $3, substr($0, index($0, $4))}' "$log"
done > "$W/phases.txt"
cat "$W/phases.txt"
echo "done: $((SECONDS - start)) s"
