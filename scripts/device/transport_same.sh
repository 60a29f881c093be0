#!/usr/bin/env bash
# The transport layer changes no figure: the mpi-gpu and nccl suites measured by the engine before
# the reshaping (BEFORE_SRC: a source tree of main) and after it (this tree), on one machine, both
# built against the carried CUDA-aware Open MPI, run alternately A B A B so drift hits both. Then:
#   scripts/records_same.py   every point of both runs says the same thing apart from its timings
#                             (benchmark, params, movement, bytes per op, accounting text, ...);
#                             the accounting strings the reshaping changed on purpose are listed in
#                             its report and passed with --ignore where needed
#   commatlas compare         the figures agree within compare's rule (identical runs: "no change"
#                             at >= 95% of points); the second pair says how far two runs of one
#                             engine differ on this machine, the yardstick for the first
# Everything lands under $OUT. One device command holds at most 10 minutes: the first call builds
# (about 3 minutes, kept on a warm machine: later calls skip it) and runs RUNS (default
# "before-1 after-1", each at most RUN_LIMIT_S); a second call with RUNS="before-2 after-2" adds the
# second pair and the spread comparison.
# Usage, from the repository root with .device-carry/ carried:
#   git archive main | tar -x -C before-src   (on the lead's machine, an untracked folder)
#   OUT=dir BEFORE_SRC=before-src bash scripts/device/transport_same.sh
#   [RUNS="before-1 after-1"] [RUN_LIMIT_S=180] [BUDGET=0.05]
set -uo pipefail
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the lent machines
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the output folder}"
: "${BEFORE_SRC:?set BEFORE_SRC to a source tree of the engine before the reshaping (git archive main)}"
BEFORE_SRC=$(cd "$BEFORE_SRC" && pwd) || exit 2
[ -f "$BEFORE_SRC/engine/CMakeLists.txt" ] || { echo "BEFORE_SRC has no engine/CMakeLists.txt"; exit 2; }
limit=${RUN_LIMIT_S:-180}
runs=${RUNS:-before-1 after-1}
budget=${BUDGET:-0.05}
mkdir -p "$OUT"
exec > >(tee "$OUT/transport_same.log") 2>&1
phase() { echo; echo "== $* ($(date -u +%T))"; }

phase "machine"
nvidia-smi --query-gpu=index,name,driver_version --format=csv
git -C . log --oneline -1 2>/dev/null || echo "after: $(pwd) (no git)"

phase "CUDA-aware Open MPI, then the engine before and after, in parallel"
CUDA_OMPI=/opt/ompi-cuda
[ -x $CUDA_OMPI/bin/mpicc ] || tar xzf .device-carry/openmpi-4.1.4-cuda-ubuntu24.tgz -C /opt || exit 1
export OPAL_PREFIX=$CUDA_OMPI PATH=$CUDA_OMPI/bin:$PATH LD_LIBRARY_PATH=$CUDA_OMPI/lib:${LD_LIBRARY_PATH:-}
common=(-DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_WITH_CUDA=ON -DCOMMATLAS_WITH_NCCL=ON -DCOMMATLAS_WITH_MPI=ON
        -DCOMMATLAS_BUILD_TESTS=OFF -DMPI_C_COMPILER=$CUDA_OMPI/bin/mpicc)
if [ -x build-before/engine/commatlas-engine ] && [ -x build-after/engine/commatlas-engine ]; then
  echo "both engines built already (a warm machine): not rebuilt"
else
( cmake -S "$BEFORE_SRC" -B build-before "${common[@]}" > "$OUT/build-before.log" 2>&1 &&
  cmake --build build-before -j8 >> "$OUT/build-before.log" 2>&1; echo "before build rc=$?" ) &
before_build=$!
( cmake -S . -B build-after "${common[@]}" > "$OUT/build-after.log" 2>&1 &&
  cmake --build build-after -j8 >> "$OUT/build-after.log" 2>&1; echo "after build rc=$?" ) &
after_build=$!
# By pid: a bare `wait` also waits for the tee of `exec > >(tee ...)`, which never ends.
wait "$before_build" "$after_build"
fi
for side in before after; do
  [ -x build-$side/engine/commatlas-engine ] || { tail -30 "$OUT/build-$side.log"; exit 1; }
done

phase "list: identical before and after"
for side in before after; do
  build-$side/engine/commatlas-engine list --json > "$OUT/list-$side.json"
  build-$side/engine/commatlas-engine list > "$OUT/list-$side.txt"
done
if diff "$OUT/list-before.txt" "$OUT/list-after.txt" > "$OUT/list.diff"; then echo "list: identical"
else echo "list: DIFFERS"; head -20 "$OUT/list.diff"; fi

export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
run() {  # run SIDE NAME: the mpi-gpu and nccl suites with that side's engine into $OUT/NAME
  local side=$1 name=$2
  phase "$name: $side engine, commatlas run --suite mpi-gpu,nccl"
  # SIGINT is Ctrl-C to commatlas: it stops the engine and keeps every record.
  COMMATLAS_ENGINE=$PWD/build-$side/engine/commatlas-engine PATH=$PWD/build-$side/engine:$PATH \
    timeout -s INT "$limit" python3 -m commatlas run --suite mpi-gpu,nccl --time-budget "$budget" --watchdog 60 \
    --out "$OUT/$name" > "$OUT/$name.log" 2>&1
  echo "$name: rc=$? ($(grep -c '"type":"result"' "$OUT/$name/results.jsonl") results," \
       "$(grep -c '"type":"skip"' "$OUT/$name/results.jsonl") skips, $(grep -c '"type":"error"' "$OUT/$name/results.jsonl") errors)"
  grep '"type":"error"' "$OUT/$name/results.jsonl" | head -5 | cut -c1-300
  rm -f "$OUT/$name/report.html"
}
for name in $runs; do run "${name%%-*}" "$name"; done

# Whatever pairs exist under $OUT (a second call adds the second pair).
for pair in "before-1 after-1" "before-2 after-2" "before-1 before-2" "after-1 after-2"; do
  set -- $pair
  [ -f "$OUT/$1/results.jsonl" ] && [ -f "$OUT/$2/results.jsonl" ] || continue
  phase "$1 vs $2"
  if [ "${1%%-*}" != "${2%%-*}" ]; then
    python3 scripts/records_same.py "$OUT/$1" "$OUT/$2" > "$OUT/records-$1-$2.txt"
    echo "records: rc=$? (0: every common point says the same things)"; tail -25 "$OUT/records-$1-$2.txt"
  fi
  python3 -m commatlas compare "$OUT/$1" "$OUT/$2" > "$OUT/compare-$1-$2.txt" 2>&1
  echo "compare: rc=$?"; head -40 "$OUT/compare-$1-$2.txt"
done
