#!/usr/bin/env bash
# Where does GPU-aware MPI's job-to-job spread at small messages live? On 2x H100 a window of 64
# device messages took 300 us in some fresh jobs and 570 us in others, whatever ran before it
# (figures-that-hold-15, call 1), at 8 B and 64 KiB alike: a per-message cost. Open MPI moves such
# a message with a synchronous copy on each side, so this times that copy below MPI, then the MPI
# figure itself under two placements, in one device call on a 2-GPU kind:
#   single   a fresh process (copy_latency_probe.cu) per CPU and GPU, 8 B copies each way, 3 rounds
#   pairs    two fresh processes at once, one per GPU, on two CPUs: the measuring CPUs of the default
#            placement (0 and 16) against other pairs
#   jobs     JOBS rounds of fresh `commatlas run` jobs of GPU-aware ping-pong and window bandwidth at
#            8 B and 4 KiB: the default placement (measuring threads on CPUs 0 and 16), then ranks in
#            blocks of 8 cores (CPUs 0 and 8), interleaved
# Everything lands in $OUT/gpu-aware-states.tar.gz; summary.txt has the per-process and per-job figures.
# Usage (repository root, .device-carry carried): OUT=/some/dir [JOBS=4] bash scripts/device/gpu_aware_states.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
JOBS=${JOBS:-4}
source scripts/device/work_folder.sh gpu_aware_states
{ lscpu; lscpu -e; grep -H . /sys/devices/system/cpu/cpu*/topology/thread_siblings_list; } > "$W/cpus.txt" 2>&1
nvcc -O2 -arch=sm_90 -std=c++17 scripts/device/copy_latency_probe.cu -o "$W/probe" || exit 1
PROBE=$W/probe

echo "single: one process per CPU and GPU"
for round in 1 2 3; do
  for cpu in 0 1 8 16 17 24; do
    for gpu in 0 1; do
      taskset -c "$cpu" "$PROBE" "$gpu" 200 | sed "s/^{/{\"round\": $round, /" >> "$W/single.jsonl"
    done
  done
done
echo "pairs: two processes at once"
for round in 1 2 3; do
  for pair in "0 16" "0 1" "0 8" "8 24"; do
    read -r a b <<< "$pair"
    taskset -c "$a" "$PROBE" 0 200 > "$W/pair-a.json" & first=$!
    taskset -c "$b" "$PROBE" 1 200 > "$W/pair-b.json"
    wait "$first"
    sed "s/^{/{\"round\": $round, \"pair\": \"$a,$b\", /" "$W/pair-a.json" "$W/pair-b.json" >> "$W/pairs.jsonl"
  done
done
rm -f "$W/pair-a.json" "$W/pair-b.json"

source scripts/device/build_engine.sh build-states "$W/build.log" || exit 1
only=mpi.gpu_aware.pingpong,mpi.gpu_aware.bandwidth
blocks_of_8="mpirun --allow-run-as-root --map-by slot:PE=8 --bind-to core -n 2"
for round in $(seq 1 "$JOBS"); do
  for placement in default blocks8; do
    dir=$W/jobs/$round-$placement
    mkdir -p "$W/jobs"
    args=(run --only "$only" --sizes "8,4K" --out "$dir")
    [ "$placement" = blocks8 ] && args+=(--launcher "$blocks_of_8")
    echo "jobs/$round-$placement: commatlas ${args[*]}" >> "$W/commands.txt"
    timeout -s INT 120 python3 -m commatlas "${args[@]}" > "$dir.log" 2>&1
    echo "job $round $placement: rc=$?"
  done
done

PYTHONPATH=python python3 - "$W" <<'PY' | tee "$W/summary.txt"
import json, statistics, sys
from pathlib import Path
from commatlas.io.results import load_run
w = Path(sys.argv[1])
print("single process, 8 B synchronous copies, per-copy median us (p10-p90 over 200 batches of 100)")
for line in (w / "single.jsonl").read_text().splitlines():
    r = json.loads(line)
    d, h = r["d2h_us"], r["h2d_us"]
    print(f"  round {r['round']} cpu {r['cpu']:>2} gpu {r['gpu']}: D2H {d[1]:6.2f} ({d[0]:.2f}-{d[2]:.2f})"
          f"  H2D {h[1]:6.2f} ({h[0]:.2f}-{h[2]:.2f})")
print("two processes at once (GPU 0 on the first CPU, GPU 1 on the second)")
for line in (w / "pairs.jsonl").read_text().splitlines():
    r = json.loads(line)
    print(f"  round {r['round']} cpus {r['pair']:>5} ran on {r['cpu']:>2} gpu {r['gpu']}: "
          f"D2H {r['d2h_us'][1]:6.2f}  H2D {r['h2d_us'][1]:6.2f}")
print("fresh jobs, device buffers: ping-pong half round trip (us), bandwidth window of 64 (us)")
for job in sorted(p for p in (w / "jobs").iterdir() if p.is_dir()):
    cells = []
    for r in sorted(load_run(job).results, key=lambda r: (r.benchmark, r.bytes)):
        if r.params.get("allocator") != "device":
            continue
        cpus = ",".join(r.rank_cpus or ())
        cells.append(f"{r.benchmark.split('.')[-1]} {r.bytes} B {r.latency_us:.1f}")
    print(f"  {job.name:<12} cpus {cpus:<6} " + "; ".join(cells))
PY
