#!/usr/bin/env bash
# Fault scenario on a GPU machine (issue: faults): one rank is killed with SIGKILL in the middle of
# an NCCL allreduce over one rank per GPU. The job must end (no hang) with a message naming what
# failed, exit non-zero, and keep every record written before the kill.
# Usage: OUT=dir bash scripts/device/fault_nccl_kill.sh     (needs >= 2 GPUs)
set -uo pipefail
export NCCL_NVLS_ENABLE=0
cd "$(dirname "$0")/../.."
{ cmake -B build-dev -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_BUILD_TESTS=OFF &&
  cmake --build build-dev -j16; } > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
gpus=$(nvidia-smi -L | wc -l)
export COMMATLAS_ENGINE=build-dev/engine/commatlas-engine PYTHONPATH=python PYTHONUNBUFFERED=1
# Small sizes first (records that must survive), then a long 1 GiB point to be killed inside.
python3 -m commatlas run --out "$OUT/run" --only nccl.allreduce --ranks "$gpus" --sizes 8,1M,1G \
  --time-budget 8 --watchdog 120 > "$OUT/run.log" 2>&1 &
cli=$!
# Wait until the 1 GiB point is running (the two smaller points are in the file), then kill rank 1.
for _ in $(seq 1 120); do
  n=$(grep -c '"type": *"result"' "$OUT/run/results.jsonl" 2>/dev/null)
  [ "${n:-0}" -ge 2 ] && break
  sleep 1
done
sleep 3
victim=$(pgrep -f 'commatlas-engine run --mpi' | sed -n 2p)
killed_at=$(date +%s.%N)
echo "killing engine pid $victim at $killed_at" | tee "$OUT/fault.txt"
kill -9 "$victim"
wait "$cli"; rc=$?
gone_at=$(date +%s.%N)
left=$(pgrep -fc 'commatlas-engine run' || true)
{ echo "cli exit status: $rc"
  echo "seconds from kill to the job's exit: $(python3 -c "print(round($gone_at - $killed_at, 2))")"
  echo "engine processes left: $left"
  echo "records kept: $(grep -c '"type": *"result"' "$OUT/run/results.jsonl")"
  tail -3 "$OUT/run.log"; } | tee -a "$OUT/fault.txt"
