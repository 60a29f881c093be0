#!/usr/bin/env bash
# The GPU copy benchmarks before and after a change that must not change them (copy initiators
# as strategies), on one machine in one device call: build the engine of the base (main's
# engine sources, carried in .device-carry/main-src) and of this tree, then run the copy suite
# (every gpu.copy_* benchmark and gpu.prefetch, --full so the SM shapes, the registered and pool
# allocators and every fan-out root run too) with each, interleaved: before, after, before, after.
# Then `commatlas compare` of each before/after pair and of the two befores (the control: what
# identical code shows on this machine), and scripts/device/records_same.py, which fails when a
# record differs in anything but its measurements (params, movement, accounting, timing method,
# latency_includes, peak, verification).
#
# Usage, here (repository root of the branch under test):
#   mkdir -p .device-carry && rm -rf .device-carry/main-src &&
#     git archive --prefix=main-src/ main CMakeLists.txt engine | tar -x -C .device-carry
# then on nvidia-h100-x2 (2 GPUs: peer copies, the matrix and the fan-out), carry .device-carry:
#   OUT=$OUT [ROUNDS=2] [RUN_LIMIT_S=100] [FULL=1] bash scripts/device/copies_same.sh
# About 6 minutes: two builds side by side, then ROUNDS x 2 runs of at most RUN_LIMIT_S each.
# Back in $OUT: copies_same.log (everything said here), compare.txt, records_same.txt, runs.tar.gz.
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
BEFORE_SRC=${BEFORE_SRC:-.device-carry/main-src}
ROUNDS=${ROUNDS:-2}
RUN_LIMIT_S=${RUN_LIMIT_S:-100}
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the lent machines
cd "$(dirname "$0")/../.." || exit 2
W=$(mktemp -d)
exec > >(tee "$OUT/copies_same.log") 2>&1
start=$SECONDS
phase() { echo; echo "== $* (t=$((SECONDS - start)) s, $(date -u +%FT%TZ))"; }

if [ ! -f "$BEFORE_SRC/engine/CMakeLists.txt" ]; then
  echo "no base engine sources at $BEFORE_SRC (see the usage at the top of this script)"; exit 2
fi

phase "machine"
nvidia-smi --query-gpu=index,name,driver_version --format=csv
nvidia-smi topo -m

phase "build before ($BEFORE_SRC) and after (this tree) side by side"
# Only the GPU backend: the copy suite needs neither MPI nor NCCL, and the builds stay short.
build() {  # build SOURCE_DIR BUILD_DIR LOG
  { cmake -S "$1" -B "$2" -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_WITH_CUDA=ON -DCOMMATLAS_WITH_MPI=OFF \
      -DCOMMATLAS_WITH_NCCL=OFF -DCOMMATLAS_BUILD_TESTS=OFF && cmake --build "$2" -j8; } > "$3" 2>&1
}
build "$BEFORE_SRC" "$W/build-before" "$W/build-before.log" & before_pid=$!
build . "$W/build-after" "$W/build-after.log" & after_pid=$!
wait $before_pid; before_rc=$?
wait $after_pid; after_rc=$?
echo "builds: before rc=$before_rc, after rc=$after_rc ($((SECONDS - start)) s)"
[ $before_rc -eq 0 ] || { tail -30 "$W/build-before.log"; exit 1; }
[ $after_rc -eq 0 ] || { tail -30 "$W/build-after.log"; exit 1; }

phase "the engines list the same benchmarks"
for side in before after; do "$W/build-$side/engine/commatlas-engine" list > "$W/list-$side.txt" 2>&1; done
diff "$W/list-before.txt" "$W/list-after.txt" && echo "list: identical ($(wc -l < "$W/list-after.txt") lines)"

export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
args=(run --suite gpu --only 'gpu.copy_*,gpu.prefetch')
[ "${FULL:-1}" = 1 ] && args+=(--full)
for round in $(seq 1 "$ROUNDS"); do
  for side in before after; do
    phase "round $round, $side: commatlas ${args[*]}"
    # SIGTERM is Ctrl-C to commatlas: it stops the engine and keeps every record (exit 130).
    COMMATLAS_ENGINE=$W/build-$side/engine/commatlas-engine \
      timeout -s TERM "$RUN_LIMIT_S" python3 -m commatlas "${args[@]}" --out "$W/$side-$round" > "$W/$side-$round.log" 2>&1
    echo "rc=$? ($(grep -c '"type":"result"' "$W/$side-$round/results.jsonl") results)"
    rm -f "$W/$side-$round/report.html"
  done
done

phase "compare"
{
  for round in $(seq 1 "$ROUNDS"); do
    echo "### round $round: before vs after"
    python3 -m commatlas compare "$W/before-$round" "$W/after-$round" --html "$W/compare-$round.html"
    echo "(exit $?)"
  done
  if [ "$ROUNDS" -ge 2 ]; then
    echo "### control: before-1 vs before-2 (identical code)"
    python3 -m commatlas compare "$W/before-1" "$W/before-2" --html "$W/compare-control.html"
    echo "(exit $?)"
  fi
} > "$OUT/compare.txt" 2>&1
grep -E "^###|common points|^rule:|changed|no change" "$OUT/compare.txt" | head -40

phase "records the same but for their measurements"
{
  for round in $(seq 1 "$ROUNDS"); do
    echo "### round $round"
    python3 scripts/device/records_same.py "$W/before-$round" "$W/after-$round"
    echo "(exit $?: 0 same, 1 a field differs)"
  done
} > "$OUT/records_same.txt" 2>&1
cat "$OUT/records_same.txt"

tar czf "$OUT/runs.tar.gz" -C "$W" --exclude='build-*' . 2>/dev/null
echo "done in $((SECONDS - start)) s"
