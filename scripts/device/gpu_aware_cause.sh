#!/usr/bin/env bash
# What the first GPU-aware MPI exchange of a job lacks, that the full run's earlier benchmarks
# give it (on 2x H100, alone, mpi.gpu_aware.* read 10-25% slower at 64 KiB - 1 MiB and in the
# collectives; 16 MiB and NCCL agree). Each case is one fresh job of the same four GPU-aware
# benchmarks at four sizes, with something different before them (the engine runs a job's
# benchmarks in key order, so ipc.* and mpi.a*/mpi.b* run first) or a different process state;
# the cases are interleaved over ROUNDS rounds, so a drift of the machine moves every case:
#   alone      the three benchmarks only
#   ipc        ipc.pingpong first (peer access and CUDA IPC mappings in both ranks' contexts)
#   host-bw    host-buffer mpi.bandwidth first (the CPUs busy-polling in MPI before)
#   host-ar    host-buffer mpi.allreduce first (also: large host buffers malloc'd and freed)
#   host-all   every host-buffer MPI benchmark that sorts before them (as in the full run)
#   heap       alone, glibc's malloc thresholds fixed (GLIBC_TUNABLES): Open MPI's coll/cuda
#              mallocs and frees a host copy of each device buffer per call, and glibc's dynamic
#              mmap/trim thresholds depend on the process's history of large frees
#   suite      the whole mpi-gpu suite at the same sizes (the full run's MPI phase, GPU part)
#   ag, ar     mpi.gpu_aware.allgather, or mpi.gpu_aware.allreduce, first
#   order      everything that runs before mpi.gpu_aware.alltoall in the run's MPI job
# SET replaces the four benchmarks (e.g. SET=mpi.gpu_aware.alltoall CASES="alone ag ar host-all order").
# Prints each case's figures (device buffers) and packs the records into $OUT.
# Usage (repository root, .device-carry carried): OUT=/some/dir [ROUNDS=4] bash scripts/device/gpu_aware_cause.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
ROUNDS=${ROUNDS:-4}
CASES=${CASES:-alone ipc host-bw host-ar host-all heap suite}
source scripts/device/work_folder.sh gpu_aware_cause
start=$SECONDS
{ nvidia-smi --query-gpu=index,name,driver_version --format=csv; nproc; lscpu -e=CPU,CORE,SOCKET,NODE
  cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag; } > "$W/machine.txt" 2>&1
source scripts/device/build_engine.sh build-cause "$W/build.log" || exit 1
set -f  # the cases' --only globs go to commatlas, not to the shell

# SET: the benchmarks every case ends with (the four GPU-aware ones unless given).
S=${SET:-mpi.gpu_aware.allgather,mpi.gpu_aware.allreduce,mpi.gpu_aware.bandwidth,mpi.gpu_aware.pingpong}
SIZES=8,64K,1M,16M
HEAP='glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824'
declare -A ARGS=(
  [alone]="--only $S" [ipc]="--only ipc.pingpong,$S" [host-bw]="--only mpi.bandwidth,$S"
 [host-ar]="--only mpi.allreduce,$S" [host-all]="--only mpi.a*,mpi.b*,$S"
 [heap]="--only $S" [suite]="--suite mpi-gpu"
 # For SET=mpi.gpu_aware.alltoall (alone 0.85x the run's order at every size, job for job): the
 # GPU-aware collectives that sort before it, one at a time, and everything before it in the run.
 [ag]="--only mpi.gpu_aware.allgather,$S" [ar]="--only mpi.gpu_aware.allreduce,$S"
 [order]="--only gpu_initiated.ipc.*,ipc.*,mpi.a*,mpi.b*,mpi.gpu_aware.allgather,mpi.gpu_aware.allreduce,$S"
)
declare -A ENVS=([heap]="GLIBC_TUNABLES=$HEAP")
for round in $(seq 1 "$ROUNDS"); do
  for name in $CASES; do
    dir="$W/round-$round/$name"; mkdir -p "$W/round-$round"
    echo "round-$round/$name: ${ENVS[$name]:-} commatlas run ${ARGS[$name]} --sizes $SIZES" >> "$W/commands.txt"
    t0=$SECONDS
    env ${ENVS[$name]:-} timeout -s INT 120 python3 -m commatlas run --out "$dir" ${ARGS[$name]} --sizes $SIZES \
      > "$dir.log" 2>&1
    echo "round $round $name: rc=$? $((SECONDS - t0)) s (t=$((SECONDS - start)) s)"
    gzip -9n "$dir/results.jsonl" 2>/dev/null
  done
done
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import gzip, json, sys
from collections import defaultdict
from pathlib import Path
root = Path(sys.argv[1])
SIZES = (8, 65536, 1048576, 16777216)
cells = defaultdict(dict)  # (benchmark, case) -> round -> {bytes: figure}
for results in sorted(root.glob("round-*/*/results.jsonl.gz")):
    rnd, case = results.parent.parent.name, results.parent.name
    for line in gzip.open(results, "rt"):
        r = json.loads(line)
        if r.get("type") != "result" or not r["benchmark"].startswith("mpi.gpu_aware."):
            continue
        if r.get("params", {}).get("allocator") != "device" or r.get("bytes") not in SIZES:
            continue
        figure = r["latency_us"] if r.get("metric") == "latency" else r.get("collective", {}).get("busbw_gbps", r.get("bandwidth_gbps"))
        cells[(r["benchmark"], case)].setdefault(rnd, {})[r["bytes"]] = figure
print("figures per round (latency us, or GB/s; device buffers); the last column: median over rounds / suite's")
suite = {}
for (bench, case), rounds in sorted(cells.items()):
    med = {}
    for b in SIZES:
        vals = sorted(v[b] for v in rounds.values() if b in v)
        med[b] = vals[len(vals) // 2] if vals else None
    if case == "suite":
        suite[bench] = med
for (bench, case), rounds in sorted(cells.items()):
    parts = []
    for b in SIZES:
        vals = [f"{rounds[k][b]:.3g}" for k in sorted(rounds) if b in rounds[k]]
        parts.append("/".join(vals) or "-")
    vals = {b: sorted(v[b] for v in rounds.values() if b in v) for b in SIZES}
    ratio = []
    for b in SIZES:
        ref = suite.get(bench, {}).get(b)
        ratio.append(f"{vals[b][len(vals[b]) // 2] / ref:.2f}" if vals[b] and ref else "-")
    print(f"{bench:26s} {case:8s} " + "  ".join(f"{p:22s}" for p in parts) + "  " + "/".join(ratio))
PY
