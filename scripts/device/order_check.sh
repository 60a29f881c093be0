#!/usr/bin/env bash
# Order independence on nvidia-h100-x2 (or any multi-GPU kind) in one device call: build for sm_90
# against the CUDA-aware Open MPI of /work/shared/gpu-mpi (carried in .device-carry/), run the
# default `commatlas run` (both GPUs, one rank per GPU in the MPI phases), then
# `commatlas check-order` over every GPU family and host MPI: each benchmark re-measured in a job of
# its own and every point judged against the same point of the full run by compare's rule.
# One check per family, each into its own folder, so a family that overruns the deadline leaves
# the finished ones intact. Alone jobs use the run's own options (sizes, budget).
# Packs the records into $OUT (8 files at most come back) and prints a summary table.
# Usage (repository root, .device-carry carried):
# ROUNDS=N (default 2) measures each benchmark alone in N fresh jobs (check-order --rounds): their
# spread sets the tolerance, so a point that varies from one fresh job to the next is not taken for
# an order dependence. IN_ORDER=1 adds --in-order: each round also re-runs the family in the run's
# order (after what preceded it in the run's job), so the run's side has a job-to-job spread too;
# IN_ORDER="FAMILY ..." adds it to those families only.
#   OUT=/some/dir [DEADLINE=330] [ROUNDS=2] [IN_ORDER=1] [RUN_ARGS=--quick] \
#     [FAMILIES="gpu_aware staged ipc nccl nccl_single copy mpi_host nccl_device gpu_initiated pingpong"] \
#     [REUSE_BASE=1] [AGAIN=1] \
#     scripts/device/order_check.sh
# Every GPU family with jobs in the run's order, 3 rounds, on 2x H100 takes two calls (about 400 s
# and 260 s; results/nvidia-h100-x2/figures-that-hold-5):
#   ROUNDS=3 IN_ORDER=1 DEADLINE=530 FAMILIES=mpi_job, then at once on the same warm machine
#   ROUNDS=3 IN_ORDER=1 DEADLINE=430 FAMILIES=process_job REUSE_BASE=1
# With the wall-time warm-up (results/nvidia-h100-x2/figures-that-hold-7) the checks themselves took
# 280 s (mpi_job, 3 rounds in order) and 381 s (process_job, 5 rounds in order), after a 34 s build
# and a 75 s default run.
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
DEADLINE=${DEADLINE:-330}  # seconds from the start; the call must end within about 6 minutes
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the lent machines
W=$(mktemp -d)
exec > >(tee "$W/order_check.log") 2>&1
start=$SECONDS
phase() { echo; echo "== $* (t=$((SECONDS - start)) s, $(date -u +%FT%TZ))"; }

phase "machine"
nvidia-smi --query-gpu=index,name,driver_version --format=csv | tee "$W/nvidia-smi.csv"

phase "CUDA-aware Open MPI, then the engine against it"
# BUILD: the build folder (build-order); on a machine still warm from wall_baseline.sh, BUILD=build-head
# reuses that build of the same tree.
BUILD=${BUILD:-build-order}
source scripts/device/build_engine.sh "$BUILD" "$W/build.log" || exit 1
$COMMATLAS_ENGINE info > "$W/engine-info.json"

phase "commatlas run (default, both GPUs)"
# REUSE_BASE=1: a second call on the same warm machine checks other families against the same
# default run, kept in the build folder (ignored by git, kept between calls on a warm machine).
KEEP=$PWD/$BUILD/base-run
if [ "${REUSE_BASE:-0}" = 1 ] && [ -f "$KEEP/default/results.jsonl" ]; then
  cp -r "$KEEP/default" "$KEEP/default.log" "$KEEP/default.time" "$W/"
  echo "default: reused from an earlier call on this machine (started $(head -c 400 "$W/default/results.jsonl" |
    grep -o '"start_time":"[^"]*"'))"
  echo "(default run reused from an earlier call: commatlas run --out default ${RUN_ARGS:-})" >> "$W/commands.txt"
else
  # RUN_ARGS: the base run's options (e.g. --quick, when the device time is short).
  echo "commatlas run --out default ${RUN_ARGS:-}" >> "$W/commands.txt"
  { time timeout -s INT 150 python3 -m commatlas run --out "$W/default" ${RUN_ARGS:-} > "$W/default.log" 2>&1; } 2> "$W/default.time"
  echo "default: rc=$? $(grep real "$W/default.time")"; tail -3 "$W/default.log"
  rm -rf "$KEEP" && mkdir -p "$KEEP" && cp -r "$W/default" "$W/default.log" "$W/default.time" "$KEEP/"
fi
tar czf "$OUT/default.tar.gz" -C "$W" --exclude=default/report.html default default.log

# name, then check-order's selection: --only globs and --exclude globs
declare -A ONLY=(
  [gpu_aware]='mpi.gpu_aware.*' [staged]='mpi.staged.*' [ipc]='ipc.*' [nccl]='nccl.*'
  [nccl_single]='nccl.single.*' [copy]='gpu.copy*' [mpi_host]='mpi.*'
  [nccl_device]='nccl_device.*' [gpu_initiated]='gpu_initiated*,pattern.*.gpu_initiated'
  [pattern]='pattern.*' [reference]='reference.*'
  # The CPU's own benchmarks and their bare reference: what a host buffer's first touch changes.
  [host]='host.*,reference.host_memcpy'
  # The issue's GPU families by the job that runs them: one check each, so that with --in-order
  # one job per round replays the run's order for all of them (a family each would replay it
  # once per family).
  [mpi_job]='mpi.gpu_aware.*,mpi.staged.*,ipc.*,nccl.*' [process_job]='gpu.copy*,nccl.single.*'
  # The families whose points move between identical jobs (GPU-aware MPI and NCCL), for more
  # rounds than the whole MPI job allows in one call; and the points sized on their first op.
  [gpu_aware_nccl]='mpi.gpu_aware.*,nccl.*'
  [first_op]='gpu.pointer_chase,pattern.bucketed_allreduce.gpu_aware,pattern.bucketed_allreduce.staged'
  # The points whose fresh processes draw one of two states (figures-that-hold-15): GPU-aware
  # small messages (about 4.5 or 10 us a half round trip) and a small copy's latency (about 7.2
  # or 8.1 us), for rounds enough to tell those states from an order dependence.
  [gpu_aware_p2p]='mpi.gpu_aware.pingpong,mpi.gpu_aware.bandwidth,mpi.gpu_aware.bibw' [copy_latency]='gpu.copy_latency'
  # Every GPU-aware MPI figure the issue's first table compares alone and inside the run: the
  # benchmarks and the patterns over GPU-aware MPI.
  [gpu_aware_all]='mpi.gpu_aware.*,pattern.*.gpu_aware'
  # What gained the copy-level readings in session 33: the patterns over MPI on device buffers and
  # the OSU-method reference, whose device sweep reads its ranks' levels around each loop.
  [witnessed]='pattern.*.gpu_aware,pattern.*.staged,reference.osu_latency,reference.osu_bw,reference.osu_bibw'
  # What session 34 changed: the chases walk a lap of their chain before the warm-up, and the
  # variants that prepare fresh memory per size keep each size's buffers for its confirmation
  # (halo2d stands for the patterns: their every mechanism, at two sizes each).
  [fresh]='gpu.pointer_chase,host.pointer_chase,host.pointer_chase_gpu_memory,gpu.copy_latency,gpu.prefetch,reference.mpi_pingpong,pattern.halo2d.*'
  # The ping-pongs of the MPI job that no family above checks on its own, since each got a wire
  # pass before its smaller sizes (GPU-aware, GPU-initiated and NCCL device-API ping-pongs are in
  # their families).
  [pingpong]='ipc.pingpong,mpi.staged.pingpong,nccl.pingpong,nccl.pingpong_launch'
)
declare -A EXCLUDE=([nccl]='nccl.single.*' [mpi_host]='mpi.staged.*,mpi.gpu_aware.*' [mpi_job]='nccl.single.*'
  [gpu_aware_nccl]='nccl.single.*')
FAMILIES=${FAMILIES:-gpu_aware staged ipc nccl nccl_single copy mpi_host}
mkdir -p "$W/order"
for family in $FAMILIES; do
  left=$((DEADLINE - (SECONDS - start)))
  if [ "$left" -lt 15 ]; then echo "$family: not checked, the deadline is near"; continue; fi
  phase "check-order $family (at most $left s)"
  # The run's own budget: a shorter one gives each point a shorter warm-up and fewer samples, a
  # difference of its own (the first check here, at 0.05 s, found launch-included copies 13-19%
  # slower alone).
  args=(--only "${ONLY[$family]}" --out "$W/order/$family" --rounds "${ROUNDS:-2}")
  case " ${IN_ORDER:-0} " in *" 1 "* | *" $family "*) args+=(--in-order) ;; esac
  [ -n "${EXCLUDE[$family]:-}" ] && args+=(--exclude "${EXCLUDE[$family]}")
  echo "commatlas check-order default ${args[*]}" >> "$W/commands.txt"
  timeout -s INT "$left" python3 -m commatlas check-order "$W/default" "${args[@]}" > "$W/order/$family.log" 2>&1
  rc=$?
  echo "$family: rc=$rc (0 all agree, 1 something differs, 2 bad input or none of this family, 130 cut short)"
  [ "$rc" -eq 2 ] && tail -1 "$W/order/$family.log"
  grep -E "^(alone .*failed|[0-9]+ of [0-9]+ points)" "$W/order/$family.log"
done

# AGAIN=1: a second default run after the checks, identical to the first: `commatlas compare` of
# the two is the test of what compare calls change on this machine (records in default-again.tar.gz).
# It may run until 120 s past DEADLINE (a default run takes 64-80 s on 2x H100), and is left out
# when less than 100 s of that remains: plan DEADLINE so that the call still ends in time.
if [ "${AGAIN:-0}" = 1 ]; then
  left=$((DEADLINE + 120 - (SECONDS - start)))
  if [ "$left" -lt 100 ]; then echo "second default run: not run, the deadline is near"
  else
    phase "commatlas run again (default, both GPUs)"
    echo "commatlas run --out default-again ${RUN_ARGS:-}" >> "$W/commands.txt"
    { time timeout -s INT "$left" python3 -m commatlas run --out "$W/default-again" ${RUN_ARGS:-} \
        > "$W/default-again.log" 2>&1; } 2> "$W/default-again.time"
    echo "default-again: rc=$? $(grep real "$W/default-again.time")"
    python3 -m commatlas compare "$W/default" "$W/default-again" > "$W/compare-again.txt" 2>&1
    grep -iE "no change|changed|winner" "$W/compare-again.txt" | head -5
    tar czf "$OUT/default-again.tar.gz" -C "$W" --exclude=default-again/report.html default-again default-again.log \
      default-again.time compare-again.txt
  fi
fi

phase "summary: every point measured alone against the full run"
python3 - "$W/order" $FAMILIES <<'EOF' | tee "$W/summary.txt"
import json, sys
from pathlib import Path
order, families = Path(sys.argv[1]), sys.argv[2:]
verdicts = ("agrees", "differs", "unstable", "not alone")
print(f"{'family':<12} {'benchmark':<34} {'points':>6} {'agree':>6} {'differ':>6} {'unstab':>6} {'missing':>7}  alone/full")
for family in families:
    f = order / family / "order-check.json"
    if not f.exists():
        print(f"{family:<12} (no verdicts: see {family}.log)")
        continue
    check = json.loads(f.read_text())
    jobs = {}
    for job in check["alone_runs"]:  # one row per benchmark, whatever the rounds (a failed job shows)
        if job["benchmark"] not in jobs or not job["ok"]:
            jobs[job["benchmark"]] = job
    for job in jobs.values():
        mine = [p for p in check["points"] if p["benchmark"] == job["benchmark"]]
        ratios = [p["ratio"] for p in mine if p["ratio"]]
        counts = [sum(p["verdict"] == v for p in mine) for v in verdicts]
        spread = f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "-"
        print(f"{family:<12} {job['benchmark']:<34} {len(mine):>6} {counts[0]:>6} {counts[1]:>6} {counts[2]:>6} "
              f"{counts[3]:>7}  {spread}{'' if job['ok'] else '  job failed: ' + job['message'][:60]}")
    if check.get("interrupted"):
        print(f"{family:<12} (cut short at the deadline)")
print()
total = {v: 0 for v in verdicts}
for family in families:
    f = order / family / "order-check.json"
    if f.exists():
        for v, n in json.loads(f.read_text())["counts"].items():
            total[v] += n
print("all families:", ", ".join(f"{n} {v}" for v, n in total.items()))
print("\nworst points (alone / full beyond compare's tolerance):")
worst = []
for family in families:
    f = order / family / "order-check.json"
    if f.exists():
        worst += [p for p in json.loads(f.read_text())["points"] if p["verdict"] in ("differs", "not alone")]
worst.sort(key=lambda p: -abs(__import__("math").log(p["ratio"])) if p["ratio"] else 0)
for p in worst[:25]:
    print(f"  {p['verdict']:<9} {p['benchmark']:<28} {p['bytes']!s:>10} B  full {p['full']:.4g}  alone "
          f"{p['alone'] if p['alone'] is None else format(p['alone'], '.4g')}  ratio {p['ratio'] or 0:.3g}  {p['variant'][:60]}")
EOF
# The verdicts and logs of every family in one small tarball; the alone jobs' records in three
# (the full run is in default.tar.gz). A tarball over 15 MiB (a file comes back up to 16 MiB) is
# packed again without the per-sample arrays: statistics and verdicts stay.
PACKED=()
pack() {  # pack NAME FAMILY...
  local name=$1; shift
  local present=() f
  PACKED+=("$@")
  for f in "$@"; do [ -d "$W/order/$f" ] && present+=("order/$f"); done
  [ ${#present[@]} -eq 0 ] && return
  tar czf "$OUT/$name.tar.gz" -C "$W" "${present[@]}"
  if [ "$(stat -c %s "$OUT/$name.tar.gz")" -gt $((15 * 1024 * 1024)) ]; then
    echo "$name.tar.gz over 15 MiB: packed again without samples_s"
    python3 - "${present[@]/#/$W/}" <<'PY'
import json, sys
from pathlib import Path
for folder in sys.argv[1:]:
    for f in Path(folder).rglob("results.jsonl"):
        out = []
        for line in f.read_text().splitlines():
            r = json.loads(line) if line.strip() else None
            if isinstance(r, dict):
                r.pop("samples_s", None)
                out.append(json.dumps(r))
        f.write_text("\n".join(out) + "\n")
PY
    tar czf "$OUT/$name.tar.gz" -C "$W" "${present[@]}"
  fi
}
tar czf "$OUT/verdicts.tar.gz" -C "$W" summary.txt $(cd "$W" && ls order/*.log order/*/order-check.json 2>/dev/null)
pack order-mpi-gpu gpu_aware staged ipc
pack order-nccl nccl nccl_single
pack order-copy-mpi copy mpi_host
pack order-host host
pack order-gpu-initiated nccl_device gpu_initiated
pack order-mpi-job mpi_job
pack order-process-job process_job
pack order-pattern-reference pattern reference
pack order-states gpu_aware_nccl first_op gpu_aware_p2p copy_latency pingpong
pack order-gpu-aware-all gpu_aware_all
# A family no pack above names still comes back (a new family's first call once returned only its
# verdicts): every one left over, in one more tarball.
leftover=()
for family in $FAMILIES; do
  case " ${PACKED[*]} " in *" $family "*) ;; *) leftover+=("$family") ;; esac
done
[ ${#leftover[@]} -gt 0 ] && pack order-other "${leftover[@]}"
tar czf "$OUT/logs.tar.gz" -C "$W" order_check.log build.log engine-info.json nvidia-smi.csv commands.txt \
  default.time 2>/dev/null
echo "total $((SECONDS - start)) s"
ls -la "$OUT"
exit 0
