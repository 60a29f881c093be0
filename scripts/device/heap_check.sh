#!/usr/bin/env bash
# Does the engine's heap setting decide what the first-op-sized points read, whatever ran before
# them? Builds this checkout (head) and an earlier commit (base: BASE_TGZ, a `git archive` without
# results/, carried in .device-carry/), then on the same machine, interleaved: a default run of
# base and of head, and `check-order` on the first-op family (gpu.pointer_chase and the bucketed
# allreduce over GPU-aware and staged MPI) with ROUNDS fresh jobs alone for each side against its
# own run. The bucketed GPU-aware allreduce reduces 25 MiB buckets, which Open MPI's coll/cuda
# copies through three 25 MiB host blocks per call: whether freeing them trims the heap (and the
# next call faults them in again) depended on what earlier benchmarks left above them.
# With DEFAULT_ROUNDS=2 (and the time for it) each side gets a second default run, and compare
# judges each side's pair. Packs records into $OUT.
# Usage (repository root, .device-carry carried):
#   OUT=/some/dir BASE_TGZ=.device-carry/base-8248c05.tgz [ROUNDS=5] [DEADLINE=540] \
#     [DEFAULT_ROUNDS=1] bash scripts/device/heap_check.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
BASE_TGZ=${BASE_TGZ:?set BASE_TGZ to a git archive of the earlier commit}
DEADLINE=${DEADLINE:-540}
export NCCL_NVLS_ENABLE=0
W=$(mktemp -d)
exec > >(tee "$W/heap_check.log") 2>&1
start=$SECONDS
trap 'tar czf "$OUT/heap-check.tar.gz" -C "$W" --exclude="*/report.html" --exclude="*/answers.json" \
  --exclude="*/compare.html" . 2>/dev/null; ls -la "$OUT"' EXIT
ONLY='gpu.pointer_chase,pattern.bucketed_allreduce.gpu_aware,pattern.bucketed_allreduce.staged'
nvidia-smi --query-gpu=index,name,driver_version --format=csv | tee "$W/nvidia-smi.csv"

BASE=/tmp/commatlas-base
rm -rf "$BASE" && mkdir -p "$BASE" && tar xzf "$BASE_TGZ" -C "$BASE" || exit 1
source scripts/device/build_engine.sh build-head "$W/build-head.log" || exit 1
# The base tree builds with the same script (its own copy may predate it), against the same MPI.
(cd "$BASE" && cp -r "$OLDPWD/.device-carry" . && source "$OLDPWD/scripts/device/build_engine.sh" build "$W/build-base.log") || exit 1
echo "builds: $((SECONDS - start)) s"

side() {  # side WHICH COMMAND...: run a commatlas command with that side's engine and Python
  local which=$1; shift
  local root=$PWD engine=$PWD/build-head/engine
  [ "$which" = base ] && root=$BASE engine=$BASE/build/engine
  COMMATLAS_ENGINE=$engine/commatlas-engine PYTHONPATH=$root/python PATH=$engine:$PATH \
    python3 -m commatlas "$@"
}
left() { echo $((DEADLINE - (SECONDS - start))); }
default_run() {  # default_run WHICH K
  local name="default-$1-$2"
  [ "$(left)" -lt 100 ] && { echo "$name: not run, the deadline is near"; return 1; }
  echo "$name ($1): commatlas run --out $name" >> "$W/commands.txt"
  local t0=$SECONDS
  timeout -s INT 150 bash -c "$(declare -f side); BASE=$BASE; side $1 run --out '$W/$name'" > "$W/$name.log" 2>&1
  echo "$name: rc=$? $((SECONDS - t0)) s (t=$((SECONDS - start)) s)"
}
check() {  # check WHICH
  local l; l=$(left)
  [ "$l" -lt 30 ] && { echo "check-$1: not run, the deadline is near"; return; }
  echo "check-$1 ($1): commatlas check-order default-$1-1 --only $ONLY --rounds ${ROUNDS:-5} --out check-$1" >> "$W/commands.txt"
  local t0=$SECONDS
  # Each side gets at most half of what is left when the base starts, so head is always reached.
  local cap=$l; [ "$1" = base ] && cap=$((l / 2))
  timeout -s INT "$cap" bash -c "$(declare -f side); BASE=$BASE; side $1 check-order '$W/default-$1-1' \
    --only '$ONLY' --rounds ${ROUNDS:-5} --out '$W/check-$1'" > "$W/check-$1.log" 2>&1
  echo "check-$1: rc=$? $((SECONDS - t0)) s (t=$((SECONDS - start)) s)"
  grep -E "^[0-9]+ of [0-9]+ points" "$W/check-$1.log"
}
default_run base 1
default_run head 1
check base
check head
if [ "${DEFAULT_ROUNDS:-1}" -ge 2 ]; then
  default_run base 2 && default_run head 2
  for which in base head; do
    [ -d "$W/default-$which-2" ] || continue
    side "$which" compare "$W/default-$which-1" "$W/default-$which-2" > "$W/compare-$which.txt" 2>&1
    echo "compare $which: $(grep -m1 'changed beyond' "$W/compare-$which.txt")"
  done
fi

# The point the heap decides, side by side: every job's median of the bucketed allreduce.
python3 - "$W" <<'EOF' | tee "$W/bucketed.txt"
import glob, json, os, sys
w = sys.argv[1]
print("median ms of pattern.bucketed_allreduce.* per job")
for f in sorted(glob.glob(f"{w}/**/results.jsonl", recursive=True)):
    for line in open(f):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("type") == "result" and str(r.get("benchmark", "")).startswith("pattern.bucketed_allreduce"):
            median = (r.get("stats") or {}).get("median_s")
            if median:
                print(f"{os.path.relpath(f, w):<44} {r['benchmark'][27:]:<10} {r.get('bytes')!s:>9} "
                      f"compute_us={r.get('params', {}).get('compute_us')!s:<5} {median * 1e3:8.2f}")
EOF
echo "total $((SECONDS - start)) s"
