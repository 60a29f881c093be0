#!/usr/bin/env bash
# The hardware as a second witness: every GPU<->GPU and host<->GPU point's wire check, and proof
# that the check bites.
#
# Each point that crosses a GPU link gets an untimed pass with NVML's NVLink and PCIe counters read
# around it (the record's `wire`, docs/results-format.md). Runs the single-process copies, STREAM
# and prefetch, and the 2-rank IPC / staged / GPU-aware MPI bandwidths, twice: as they are (every
# judged point "ok"), and with COMMATLAS_TEST_WIRE_SWAP=1, which makes every route declare the other
# link class (every judged point must become an error "wire check failed").
#
# Usage (repository root, 2 GPUs, .device-carry carried):
#   OUT=dir [SIZES=64K,64M,256M] [SINGLE=keys] [MPI=keys] bash scripts/device/wire_witness.sh
# SINGLE and MPI replace the single-process and 2-rank selections (e.g. the ping-pongs:
# SINGLE=nccl.single.pingpong,gpu.copy_latency MPI=ipc.pingpong,mpi.gpu_aware.pingpong,...).
# Writes $OUT/{single,mpi}-{real,swapped}.jsonl, logs, table.txt, logs.tgz.
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the lent machines
cd "$(dirname "$0")/../.." || exit 1
mkdir -p "$OUT"
start=$SECONDS
# The CUDA-aware Open MPI of .device-carry: its mpirun comes first on PATH, so GPU-aware MPI runs.
source scripts/device/build_engine.sh build-wire "$OUT/build.log" || exit 1
E=$COMMATLAS_ENGINE
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
nvidia-smi nvlink -gt d > "$OUT/nvlink_before.txt" 2>&1
SIZES=${SIZES:-64K,64M,256M}
SINGLE=${SINGLE:-gpu.copy_ce,gpu.copy_sm,gpu.stream_copy,gpu.stream_write,gpu.stream_read,gpu.prefetch}
MPI=${MPI:-ipc.bandwidth,mpi.staged.bandwidth,mpi.gpu_aware.bandwidth}
common=(--time-budget 0.01 --watchdog 30 --progress none)

run_logged() {  # limit, name, command...
  local limit=$1 name=$2; shift 2
  echo "timeout $limit $*" >> "$OUT/commands.txt"
  local t0=$SECONDS
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  echo "$name: rc=$? in $((SECONDS - t0)) s"
}

for mode in real swapped; do
  swap=0; [ "$mode" = swapped ] && swap=1
  export COMMATLAS_TEST_WIRE_SWAP=$swap
  run_logged 120 "single-$mode" "$E" run --only "$SINGLE" --sizes "$SIZES" "${common[@]}" --out "$OUT/single-$mode.jsonl"
  run_logged 90 "mpi-$mode" mpirun --allow-run-as-root -n 2 -x NCCL_NVLS_ENABLE -x COMMATLAS_TEST_WIRE_SWAP "$E" run --mpi \
    --only "$MPI" --sizes "$SIZES" "${common[@]}" --out "$OUT/mpi-$mode.jsonl"
done
unset COMMATLAS_TEST_WIRE_SWAP
nvidia-smi nvlink -gt d > "$OUT/nvlink_after.txt" 2>&1

python3 - "$OUT" <<'PY' | tee "$OUT/table.txt"
import json, sys
from pathlib import Path
out = Path(sys.argv[1])

def points(name):
    got = {}
    path = out / name
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("type") in ("result", "error") and r.get("bytes") is not None:
            got[r["point"]] = r
    return got

def cell(r):
    if r is None:
        return "-"
    w = r.get("wire")
    if w is None:
        return ("result" if r["type"] == "result" else "ERROR " + r["message"][:50]) + ", no wire"
    seen = w.get("observed_bytes")
    ratio = f'{seen / w["claimed_bytes"]:.2f}x' if seen is not None and w.get("claimed_bytes") else "-"
    return f'{r["type"]} {w["verdict"]} {ratio} {w["detail"][:70]}'

bad, judged = [], 0
for group in ("single", "mpi"):
    real, swapped = points(f"{group}-real.jsonl"), points(f"{group}-swapped.jsonl")
    for key in sorted(set(real) | set(swapped)):
        a, b = real.get(key), swapped.get(key)
        if not ((a and "wire" in a) or (b and "wire" in b)):
            continue
        print(f"{key[:100]}\n    as is:   {cell(a)}\n    swapped: {cell(b)}")
        wa = a and a.get("wire")
        if wa and wa["verdict"] in ("ok", "failed"):
            judged += 1
            if wa["verdict"] != "ok":
                bad.append(f"{key}: {wa['detail']}")
            wb = b and b.get("wire")
            if not (b and b["type"] == "error" and wb and wb["verdict"] == "failed"):
                bad.append(f"{key}: the swapped route did not fail ({cell(b)})")
print()
print(f"judged points: {judged}")
print("PASS: every judged point was seen on its link, and failed with the link swapped" if judged and not bad
      else "FAIL:\n  " + "\n  ".join(bad or ["no point was judged"]))
PY
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *.txt 2>/dev/null)
echo "total: $((SECONDS - start)) s"
