#!/usr/bin/env bash
# Does where the two ranks' threads sit decide GPU-aware MPI's job-to-job state? (On 2x H100 the
# CPU-bound part of mpi.gpu_aware.* reads fast in some fresh jobs and 30-45% slower in others,
# whatever ran before; each rank is bound to a block of 16 vCPUs by default.) Measures the
# vCPU-to-vCPU round trip of this VM (scripts/device/core_to_core.cpp) at the start and at the
# end, then runs the same GPU-aware job with the default binding, with the two ranks pinned to
# the closest pair of vCPUs and to the farthest pair, unbound, and with ipc.pingpong first (which
# left the bandwidth fast in 4 of 4 jobs of gpu_aware_cause.sh), interleaved over ROUNDS rounds.
# Usage (repository root, .device-carry carried): OUT=/some/dir [ROUNDS=3] bash scripts/device/rank_placement.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
ROUNDS=${ROUNDS:-3}
CASES=${CASES:-default near far unbound ipc}
source scripts/device/work_folder.sh rank_placement
start=$SECONDS
g++ -O2 -std=c++17 -pthread scripts/device/core_to_core.cpp -o "$W/core_to_core" || exit 1
"$W/core_to_core" > "$W/c2c-start.txt"
echo "c2c matrix: $((SECONDS - start)) s"
source scripts/device/build_engine.sh build-placement "$W/build.log" || exit 1

read -r NEAR FAR < <(python3 - "$W/c2c-start.txt" <<'PY'
import sys
pairs = [line.split() for line in open(sys.argv[1])]
pairs = sorted((float(ns), int(a), int(b)) for a, b, ns in pairs)
print(f"{pairs[0][1]},{pairs[0][2]} {pairs[-1][1]},{pairs[-1][2]}")
PY
)
echo "closest pair $NEAR, farthest pair $FAR"
ONLY=mpi.gpu_aware.allgather,mpi.gpu_aware.bandwidth,mpi.gpu_aware.pingpong
# --cpu-set maps by its own list (Open MPI refuses it beside --map-by)
pinned() { echo "mpiexec --allow-run-as-root --cpu-set $1 --bind-to core -n 2"; }
for round in $(seq 1 "$ROUNDS"); do
  for name in $CASES; do
    dir="$W/round-$round/$name"; mkdir -p "$W/round-$round"
    case $name in
      default) extra=();;
      near) extra=(--launcher "$(pinned "$NEAR")");;
      far) extra=(--launcher "$(pinned "$FAR")");;
      unbound) extra=(--launcher "mpiexec --allow-run-as-root --bind-to none -n 2");;
      ipc) extra=(--only ipc.pingpong);;  # CUDA IPC first in the job, default binding
    esac
    echo "round-$round/$name: commatlas run --only $ONLY --sizes 8,64K,1M ${extra[*]}" >> "$W/commands.txt"
    t0=$SECONDS
    timeout -s INT 120 python3 -m commatlas run --out "$dir" --only $ONLY --sizes 8,64K,1M "${extra[@]}" \
      > "$dir.log" 2>&1
    echo "round $round $name: rc=$? $((SECONDS - t0)) s (t=$((SECONDS - start)) s)"
    gzip -9n "$dir/results.jsonl" 2>/dev/null
  done
done
"$W/core_to_core" > "$W/c2c-end.txt"
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import gzip, json, sys
from pathlib import Path
root = Path(sys.argv[1])
for name in ("c2c-start.txt", "c2c-end.txt"):
    ns = {(int(a), int(b)): float(v) for a, b, v in (l.split() for l in open(root / name))}
    values = sorted(ns.values())
    print(f"{name}: {len(values)} pairs, min {values[0]:.0f} ns, median {values[len(values)//2]:.0f}, max {values[-1]:.0f}")
    edges = [0, 100, 150, 200, 300, 400, 600, 1000, 1e9]
    print("  round trips by band: " + ", ".join(f"<{hi:.0f} ns: {sum(lo <= v < hi for v in values)}" for lo, hi in zip(edges, edges[1:])))
    # Each CPU's close group: the CPUs within 1.3x of its nearest.
    cpus = sorted({c for pair in ns for c in pair})
    get = lambda a, b: ns[(min(a, b), max(a, b))]
    groups = set()
    for a in cpus:
        near = min(get(a, b) for b in cpus if b != a)
        groups.add(tuple(sorted([a] + [b for b in cpus if b != a and get(a, b) <= 1.3 * near])))
    print("  close groups: " + " ".join("{" + ",".join(map(str, g)) + "}" for g in sorted(groups)))
    print(f"  (0,16) {get(0, 16):.0f} ns; 0 to 1..15 median {sorted(get(0, b) for b in range(1, 16))[7]:.0f}; 0 to 16..31 median {sorted(get(0, b) for b in range(16, 32))[8]:.0f}")
WANT = {("mpi.gpu_aware.allgather", 65536), ("mpi.gpu_aware.allgather", 1048576), ("mpi.gpu_aware.bandwidth", 8),
        ("mpi.gpu_aware.bandwidth", 65536), ("mpi.gpu_aware.bandwidth", 1048576), ("mpi.gpu_aware.pingpong", 8),
        ("mpi.gpu_aware.pingpong", 65536)}
print("job                allgather 64K/1M GB/s   bandwidth 8 B MB/s, 64K/1M GB/s   pingpong 8 B/64K us   cpus")
for results in sorted(root.glob("round-*/*/results.jsonl.gz")):
    got, cpus = {}, set()
    for line in gzip.open(results, "rt"):
        r = json.loads(line)
        if r.get("type") != "result" or r.get("params", {}).get("allocator") != "device":
            continue
        cpus.add(",".join(r.get("placement", {}).get("cpus") or []))
        if (r["benchmark"], r["bytes"]) in WANT:
            got[(r["benchmark"], r["bytes"])] = r["latency_us"] if r.get("metric") == "latency" else r.get("collective", {}).get("busbw_gbps", r.get("bandwidth_gbps"))
    g = lambda b, s, k=1: f"{got[(b, s)] * k:.3g}" if (b, s) in got else "-"
    print(f"{results.parent.parent.name + '/' + results.parent.name:18s} {g('mpi.gpu_aware.allgather', 65536)}/{g('mpi.gpu_aware.allgather', 1048576):18s}"
          f" {g('mpi.gpu_aware.bandwidth', 8, 1000)}, {g('mpi.gpu_aware.bandwidth', 65536)}/{g('mpi.gpu_aware.bandwidth', 1048576):20s}"
          f" {g('mpi.gpu_aware.pingpong', 8)}/{g('mpi.gpu_aware.pingpong', 65536):14s} {' '.join(sorted(cpus))}")
PY
