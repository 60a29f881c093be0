#!/usr/bin/env bash
# Which earlier benchmark of the MPI job moves a family's points? check-order says that the points
# read differently alone than in the run's order; this finds which predecessor does it. Each case is
# one fresh `commatlas run` job: the TARGET benchmarks alone, or after one group of the benchmarks
# that precede them in the run's job. The cases are interleaved over ROUNDS rounds, so a drift of
# the machine shows in every case alike. nvidia-smi samples the GPUs' SM clock, temperature and
# power every 200 ms meanwhile, so a case that leaves the GPUs hotter or slower shows beside it.
# Prints, per case, each round's geometric mean of TARGET's points over the alone case's median
# (1.00: as alone), and packs the records into $OUT.
# Usage (repository root, .device-carry carried):
#   OUT=/some/dir [ROUNDS=3] [DEADLINE=480] [TARGET=nccl.allgather,nccl.bibw,...] \
#     [CASES="after-x=mpi.x.* after-y=ipc.*,gpu_initiated.ipc.*"] bash scripts/device/order_bisect.sh
# Each CASES word is NAME=SELECTION, the selection's commas kept: the TARGET list is appended to it.
# A word may end in @VAR=VALUE (one or more): that case's job runs with those variables set. An
# empty selection runs TARGET alone (e.g. "alone-late=@COMMATLAS_X=1"). A selection after ^ runs
# in a job of its own just before TARGET's job alone ("prev-ipc=^ipc.*"): the GPUs' recent work
# without the process's state. "^idle:S" leaves the GPUs idle for S seconds instead.
# PLAN_ONLY=1 prints each case's commands and exits: check a CASES string here before a device call.
# THREADS=1 also samples each rank's threads from /proc (scripts/device/thread_census.py): which
# threads share the measuring thread's CPU, and what CPU time each took while TARGET ran.
set -uo pipefail
ROUNDS=${ROUNDS:-3}
DEADLINE=${DEADLINE:-480}
TARGET=${TARGET:-nccl.allgather,nccl.allreduce,nccl.bibw,nccl.reduce,nccl.reduce_scatter}
# The MPI job's predecessors of the NCCL family, by group (the run's order: gpu_initiated.ipc, ipc,
# host MPI, GPU-aware MPI, staged MPI, then NCCL).
CASES=${CASES:-"after-ipc=ipc.*,gpu_initiated.ipc.* after-host-mpi=mpi.allgather,mpi.allreduce,mpi.alltoall,mpi.bandwidth,mpi.bibw,mpi.broadcast,mpi.pingpong,mpi.reduce_scatter after-gpu-aware=mpi.gpu_aware.* after-staged=mpi.staged.*"}
declare -A case_args=([alone]="$TARGET") case_env=([alone]="") case_pre=([alone]="")
names=(alone)
bad_case() { echo "order_bisect.sh: CASES word '$1': $2" >&2; exit 2; }
read -ra case_words <<< "$CASES"  # split on spaces, no globbing of the selections
for c in "${case_words[@]}"; do
  [[ $c == *=* ]] || bad_case "$c" "needs NAME=SELECTION"
  name=${c%%=*} rest=${c#*=}
  [[ $name =~ ^[A-Za-z0-9_.-]+$ ]] || bad_case "$c" "the name must be letters, digits, '.', '_' or '-' (it names a folder)"
  [ -z "${case_args[$name]+set}" ] || bad_case "$c" "the name '$name' is taken"
  selection=${rest%%@*}
  case_env[$name]=""
  if [ "$rest" != "$selection" ]; then
    case_env[$name]=${rest#*@}
    IFS=@ read -ra assignments <<< "${case_env[$name]}"
    for a in "${assignments[@]}"; do
      [[ $a =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || bad_case "$c" "'$a' after @ is not VAR=VALUE"
    done
  fi
  case_pre[$name]=""
  if [ "${selection:0:1}" = "^" ]; then
    case_pre[$name]=${selection#^}; selection=""
    [ -n "${case_pre[$name]}" ] || bad_case "$c" "^ needs a selection or idle:SECONDS after it"
    if [ "${case_pre[$name]%%:*}" = idle ] && ! [[ ${case_pre[$name]#idle:} =~ ^[0-9]+$ ]]; then
      bad_case "$c" "idle: needs whole seconds"
    fi
  fi
  case_args[$name]=${selection:+$selection,}$TARGET
  names+=("$name")
done
# What one job of a case runs, a line per step (commands.txt and PLAN_ONLY).
describe_case() {
  local name=$1 pre=${case_pre[$1]}
  if [ "${pre%%:*}" = idle ]; then echo "$name: first sleep ${pre#idle:} s"
  elif [ -n "$pre" ]; then echo "$name: first commatlas run --only $pre (records in $name.pre)"; fi
  echo "$name: ${case_env[$name]//@/ }${case_env[$name]:+ }commatlas run --only ${case_args[$name]}"
}
if [ "${PLAN_ONLY:-0}" = 1 ]; then
  for name in "${names[@]}"; do describe_case "$name"; done
  exit 0
fi
OUT=${OUT:?set OUT to the folder that receives logs and records}
source scripts/device/work_folder.sh order_bisect
start=$SECONDS
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv | tee "$W/nvidia-smi.csv"
source scripts/device/build_engine.sh build-bisect "$W/build.log" || exit 1
in_background nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv,noheader -lms 200 > "$W/clocks.csv"
if [ "${THREADS:-0}" = 1 ]; then
  in_background python3 scripts/device/thread_census.py sample "$W/threads.jsonl"
fi

for round in $(seq 1 "$ROUNDS"); do
  for name in "${names[@]}"; do
    if [ $((SECONDS - start)) -gt "$DEADLINE" ]; then echo "round $round $name: not run, the deadline is near"; continue; fi
    dir="$W/round-$round/$name"; mkdir -p "$W/round-$round"
    IFS=@ read -ra assignments <<< "${case_env[$name]}"
    describe_case "$name" | sed "s|^|round-$round/|" >> "$W/commands.txt"
    t0=$SECONDS
    pre=${case_pre[$name]}
    if [ "${pre%%:*}" = idle ]; then
      sleep "${pre#idle:}"
    elif [ -n "$pre" ]; then
      timeout -s INT 120 python3 -m commatlas run --out "$dir.pre" --only "$pre" > "$dir.pre.log" 2>&1
    fi
    env "${assignments[@]}" timeout -s INT 120 python3 -m commatlas run --out "$dir" --only "${case_args[$name]}" > "$dir.log" 2>&1
    echo "round $round $name: rc=$? $((SECONDS - t0)) s (t=$((SECONDS - start)) s)"
  done
done
stop_background
if [ "${THREADS:-0}" = 1 ]; then
  python3 scripts/device/thread_census.py summarize "$W" "$TARGET" | tee "$W/threads-summary.txt"
fi
PYTHONPATH=python python3 - "$W" "$TARGET" "${names[@]}" <<'PY' | tee "$W/summary.txt"
import sys, math, statistics
from pathlib import Path
from commatlas.io.results import load_run
w, targets, names = Path(sys.argv[1]), set(sys.argv[2].split(",")), sys.argv[3:]
figures = {}  # (case, round) -> {point: value}
for run_dir in sorted(w.glob("round-*/*")):
    if not run_dir.is_dir() or not any((run_dir / n).exists() for n in ("results.jsonl", "results.jsonl.gz")):
        continue
    points = {}
    for r in load_run(run_dir).results:
        if r.benchmark in targets:
            value = r.bandwidth_gbps if r.metric == "bandwidth" else 1 / r.latency_us
            points[(r.benchmark, r.bytes, tuple(sorted(r.params.items())))] = value
    figures[(run_dir.name, run_dir.parent.name)] = points
alone = {}
for (case, _), points in figures.items():
    if case == "alone":
        for k, v in points.items():
            alone.setdefault(k, []).append(v)
alone = {k: statistics.median(v) for k, v in alone.items()}
print("geometric mean over the target points of (case / alone's median), higher is faster: per round over all")
print("sizes, per round over the latency-bound sizes (up to 64 KiB, where the order costs showed), per size")
sizes = sorted({k[1] for k in alone})
print(f"{'case':<18} {'rounds':<30} {'rounds <= 64 KiB':<30} " + " ".join(f"{s:>9}" for s in sizes))
def geomean_text(logs):
    return f"{math.exp(statistics.mean(logs)):.3f}" if logs else "-"
for case in names:
    rounds, small_rounds, per_size = [], [], {s: [] for s in sizes}
    for (c, rnd), points in sorted(figures.items()):
        if c != case:
            continue
        logs = [math.log(v / alone[k]) for k, v in points.items() if k in alone and v > 0]
        rounds.append(geomean_text(logs))
        small_rounds.append(geomean_text([math.log(v / alone[k]) for k, v in points.items()
                                          if k in alone and v > 0 and k[1] <= 65536]))
        for k, v in points.items():
            if k in alone and v > 0:
                per_size[k[1]].append(math.log(v / alone[k]))
    cells = [f"{math.exp(statistics.mean(x)):9.3f}" if x else f"{'-':>9}" for x in per_size.values()]
    print(f"{case:<18} {' '.join(rounds):<30} {' '.join(small_rounds):<30} " + " ".join(cells))
PY
# clocks.csv is not joined to the points here: each record's `time` stamp places it in the file.
echo "total $((SECONDS - start)) s"
