#!/usr/bin/env bash
# Where a run's wall time goes outside its points, on the GPU machines, in one call: each launch a
# run makes, timed bare (the launcher alone, the engine's start-up queries, an engine job with one
# point, the OSU-method program with one size, host and device buffers), ROUNDS times (3); then
# QUICK runs of `commatlas run --quick` (2) and DEFAULT default runs (1) through run_phases.py,
# whose time line splits every phase into start-up, points and tear-down.
# Usage (repository root, .device-carry carried):
#   OUT=/some/dir [ROUNDS=3] [QUICK=2] [DEFAULT=1] bash scripts/device/wall_parts.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
source scripts/device/work_folder.sh wall_parts
start=$SECONDS
nvidia-smi --query-gpu=index,name,driver_version --format=csv | tee "$W/nvidia-smi.csv"
source scripts/device/build_engine.sh build-parts "$W/build.log" || exit 1
ENGINE=$COMMATLAS_ENGINE
OSU=$(dirname "$ENGINE")/commatlas-osu-ref
MPIEXEC=(mpiexec --allow-run-as-root --map-by slot:PE=16 --bind-to core -n 2)

source scripts/device/timed.sh
echo "== bare launches ($((SECONDS - start)) s)"
for round in $(seq 1 "${ROUNDS:-3}"); do
  echo "-- round $round"
  timed "mpiexec -n 2 true" "${MPIEXEC[@]}" true
  timed "engine info" "$ENGINE" info --json
  timed "engine topo" "$ENGINE" topo --json
  timed "engine list" "$ENGINE" list --json
  timed "engine run: harness overhead (1 process)" "$ENGINE" run --only reference.harness_overhead --out "$W/bare-1.jsonl"
  timed "engine run --mpi: mpi.pingpong 8 B" "${MPIEXEC[@]}" "$ENGINE" run --mpi --only mpi.pingpong --sizes 8 --out "$W/bare-2.jsonl"
  timed "engine run --mpi: nccl.pingpong 8 B" "${MPIEXEC[@]}" "$ENGINE" run --mpi --only nccl.pingpong --sizes 8 --out "$W/bare-3.jsonl"
  timed "osu-ref latency 8 B, host, --gpu-context" "${MPIEXEC[@]}" "$OSU" --tests latency --sizes 8 --gpu-context
  timed "osu-ref latency 8 B, device" "${MPIEXEC[@]}" "$OSU" --tests latency --sizes 8 --buffers device
  timed "osu-ref default host sweep (2 passes)" "${MPIEXEC[@]}" "$OSU" --tests latency,bw,bibw \
    --sizes 1,64,4096,65536,1048576 --gpu-context --passes 2
  timed "osu-ref default device sweep (2 passes)" "${MPIEXEC[@]}" "$OSU" --tests latency,bw,bibw \
    --sizes 8,4096,65536,1048576,16777216 --buffers device --passes 2
done | tee "$W/launches.txt"
rm -f "$W"/bare-*.jsonl "$W/last.out"

run() {  # run NAME ARGS...
  local name=$1 t0; shift
  echo "$name: commatlas run --out $name $*" >> "$W/commands.txt"
  t0=$(now)
  timeout -s INT 170 python3 scripts/run_phases.py run --out "$W/$name" "$@" > "$W/$name.log" 2>&1
  echo "$name rc=$? $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f} s')" "$t0" "$(now)")" |
    tee -a "$W/walls.txt"
  gzip -f "$W/$name/results.jsonl" 2>/dev/null
}
echo "== runs ($((SECONDS - start)) s)"
for k in $(seq 1 "${QUICK:-2}"); do run "quick-$k" --quick; done
for k in $(seq 1 "${DEFAULT:-1}"); do run "default-$k"; done
for log in "$W"/quick-*.log "$W"/default-*.log; do
  [ -f "$log" ] || continue
  awk -v run="$(basename "$log" .log)" '/^ *[0-9.]+ +[0-9.]+ +[0-9.]+  / {printf "%-10s %6s %s\n", run, $3, substr($0, index($0, $4))}' "$log"
done > "$W/phases.txt"
cat "$W/phases.txt"
echo "done: $((SECONDS - start)) s"
