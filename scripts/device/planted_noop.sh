#!/usr/bin/env bash
# A copy that did not happen never becomes a bandwidth: the planted no-op on the GPU paths.
#
# COMMATLAS_TEST_SKIP_MOVE=1 makes the real GPU copies (copy engine and SM), STREAM copy/write,
# NCCL calls, CUDA IPC copies and MPI calls do nothing inside timed batches; the untimed probe and
# warm-up still move the bytes (the fault a destination poisoned once at setup would miss). Each
# benchmark runs at 2 sizes without the switch (every point a result, `verified.method` "bytes"
# where bytes move) and with it (every such point an `error` "data check failed", no bandwidth).
# COMMATLAS_TEST_SHARE_GPU=1 lets a one-GPU machine run them: single-process NCCL with a one-GPU
# communicator, CUDA IPC between 2 ranks sharing the GPU. Read/chase/prefetch points check
# something else (sum, chain, unchanged) and have no switch: they stay results both ways.
#
# Usage (repository root): OUT=dir bash scripts/device/planted_noop.sh   (one GPU is enough)
# Writes $OUT/{single,mpi,ipc_pingpong}-{real,planted}.jsonl, logs, table.txt, logs.tgz.
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the lent machines
cd "$(dirname "$0")/../.."
mkdir -p "$OUT"
start=$SECONDS
{ cmake -B build-dev -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_BUILD_TESTS=OFF &&
  cmake --build build-dev -j16; } > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
echo "build: $((SECONDS - start)) s"
E=$PWD/build-dev/engine/commatlas-engine
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
SIZES=${SIZES:-64K,64M}
SINGLE='gpu.copy_ce,gpu.copy_sm,gpu.copy_latency,gpu.stream_copy,gpu.stream_write,gpu.stream_read,gpu.prefetch,nccl.single.*'
MPI='ipc.bandwidth,mpi.staged.bandwidth,mpi.staged.pingpong,mpi.staged.allreduce,mpi.gpu_aware.bandwidth'
common=(--time-budget 0.01 --watchdog 30 --progress none)

run_logged() {  # limit, name, command...
  local limit=$1 name=$2; shift 2
  echo "timeout $limit $*" >> "$OUT/commands.txt"
  local t0=$SECONDS
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  echo "$name: rc=$? in $((SECONDS - t0)) s"
}

for mode in real planted; do
  skip=0; [ "$mode" = planted ] && skip=1
  export COMMATLAS_TEST_SHARE_GPU=1 COMMATLAS_TEST_SKIP_MOVE=$skip
  run_logged 70 "single-$mode" "$E" run --only "$SINGLE" --sizes "$SIZES" "${common[@]}" --out "$OUT/single-$mode.jsonl"
  mpi=(mpirun --allow-run-as-root -n 2 -x NCCL_NVLS_ENABLE -x COMMATLAS_TEST_SHARE_GPU -x COMMATLAS_TEST_SKIP_MOVE "$E" run --mpi)
  run_logged 50 "mpi-$mode" "${mpi[@]}" --only "$MPI" --sizes "$SIZES" "${common[@]}" --out "$OUT/mpi-$mode.jsonl"
  # Two processes spinning on one GPU take turns by time slice: a round trip costs milliseconds,
  # so the ping-pong gets small sizes and a bound of its own.
  run_logged 40 "ipc_pingpong-$mode" "${mpi[@]}" --only ipc.pingpong --sizes 8,64K "${common[@]}" \
    --out "$OUT/ipc_pingpong-$mode.jsonl"
done
unset COMMATLAS_TEST_SHARE_GPU COMMATLAS_TEST_SKIP_MOVE

python3 - "$OUT" <<'EOF' | tee "$OUT/table.txt"
import json, sys
from pathlib import Path
out = Path(sys.argv[1])

def points(name):
    got = {}
    path = out / name
    if not path.exists():
        return got
    for line in path.read_text().splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("type") in ("result", "error", "skip") and r.get("bytes") is not None:
            got[r["point"]] = r
    return got

def cell(r):
    if r is None:
        return "-"
    if r["type"] == "result":
        v = r["verified"]
        figure = f'{r["bandwidth_gbps"]:.1f} GB/s' if r["metric"] == "bandwidth" else f'{r["latency_us"]:.2f} us'
        return f'result {figure} [{v["method"]}, {v["bytes_checked"]} B]'
    if r["type"] == "error":
        return "ERROR " + r["message"][:60]
    return "skip " + r["reason"][:50]

bad = []
counts = {"planted errors": 0, "real verified by bytes": 0}
print(f'{"point":<96} {"without the switch":<44} with COMMATLAS_TEST_SKIP_MOVE=1')
for group in ("single", "mpi", "ipc_pingpong"):
    real, planted = points(f"{group}-real.jsonl"), points(f"{group}-planted.jsonl")
    for key in sorted(set(real) | set(planted)):
        a, b = real.get(key), planted.get(key)
        print(f"{key[:96]:<96} {cell(a)[:44]:<44} {cell(b)}")
        if a and a["type"] == "result" and a["verified"]["method"] == "bytes":
            counts["real verified by bytes"] += 1
            if not (b and b["type"] == "error" and b["message"].startswith("data check failed")):
                bad.append(f"{key}: planted no-op gave {cell(b)}")
            else:
                counts["planted errors"] += 1
        if a and a["type"] == "error":
            bad.append(f"{key}: error without the switch: {a['message'][:120]}")
        if b and b["type"] == "result" and b["verified"]["method"] == "bytes":
            bad.append(f"{key}: a result verified by bytes with the switch on")
print()
print(", ".join(f"{k}: {v}" for k, v in counts.items()))
print("PASS: every point that moves bytes failed its data check under the planted no-op" if not bad and counts["planted errors"]
      else "FAIL:\n  " + "\n  ".join(bad or ["nothing was measured"]))
EOF
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log commands.txt 2>/dev/null)
echo "total: $((SECONDS - start)) s"
