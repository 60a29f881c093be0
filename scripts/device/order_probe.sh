#!/usr/bin/env bash
# What a fresh job lacks that the full run gives the two ping-pongs that read slower alone
# (nccl.pingpong_launch with its launch included, mpi.gpu_aware.pingpong; session 10's
# check-order rounds on 2x H100). Each case is one fresh `commatlas run --only ...` job, the cases
# interleaved over ROUNDS rounds, so a drift of the machine shows as a drift of every case:
#   alone       the two benchmarks, each alone
#   after-nccl  nccl.pingpong first (NCCL busy on both GPUs before the launch-included loop)
#   after-mpi   host MPI ping-pong and bandwidth first (the CPUs busy-polling before)
#   phase       the whole mpi-gpu suite (the full run's MPI phase without its host MPI benchmarks)
# Prints each case's 8 B figures and packs the records into $OUT.
# Usage (repository root, .device-carry carried): OUT=/some/dir [ROUNDS=2] bash scripts/device/order_probe.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
ROUNDS=${ROUNDS:-2}
source scripts/device/work_folder.sh order_probe
start=$SECONDS
source scripts/device/build_engine.sh build-probe "$W/build.log" || exit 1

declare -A CASE=(
  [alone-launch]='--only nccl.pingpong_launch'
  [alone-gpu-aware]='--only mpi.gpu_aware.pingpong'
  [after-nccl]='--only nccl.pingpong,nccl.pingpong_launch --sizes 8,4K,64K'
  [after-mpi]='--only mpi.pingpong,mpi.bandwidth,nccl.pingpong_launch,mpi.gpu_aware.pingpong --sizes 8,4K,64K'
  [phase]='--suite mpi-gpu'
)
for round in $(seq 1 "$ROUNDS"); do
  for name in alone-launch alone-gpu-aware after-nccl after-mpi phase; do
    dir="$W/round-$round/$name"; mkdir -p "$W/round-$round"
    echo "round-$round/$name: commatlas run ${CASE[$name]}" >> "$W/commands.txt"
    t0=$SECONDS
    timeout -s INT 120 python3 -m commatlas run --out "$dir" ${CASE[$name]} > "$dir.log" 2>&1
    echo "round $round $name: rc=$? $((SECONDS - t0)) s (t=$((SECONDS - start)) s)"
  done
done
python3 - "$W" <<'PY' | tee "$W/summary.txt"
import json, sys
from pathlib import Path
root = Path(sys.argv[1])
print(f"{'case':24s} {'launch_included 8B/4K/64K us':32s} {'gpu_aware device 8B/4K/64K us':32s}")
for results in sorted(root.glob("round-*/*/results.jsonl")):
    launch, aware = {}, {}
    for line in results.read_text().splitlines():
        r = json.loads(line)
        if r.get("type") != "result" or r.get("bytes") not in (8, 4096, 65536):
            continue
        p = r.get("params", {})
        if r["benchmark"] == "nccl.pingpong_launch" and p.get("launch_mode") == "launch_included":
            launch[r["bytes"]] = r["latency_us"]
        if r["benchmark"] == "mpi.gpu_aware.pingpong" and p.get("allocator") == "device":
            aware[r["bytes"]] = r["latency_us"]
    text = lambda d: "/".join(f"{d[b]:.2f}" if b in d else "-" for b in (8, 4096, 65536))
    print(f"{results.parent.parent.name + '/' + results.parent.name:24s} {text(launch):32s} {text(aware):32s}")
PY
