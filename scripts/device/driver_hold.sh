#!/usr/bin/env bash
# What `commatlas-engine hold` saves each engine process a run starts (engine/app/main.cpp,
# cmd_hold): `info` and `topo` timed alone, ROUNDS times (3) each, with nothing else running, with
# a process that only holds the device files open, and with `commatlas-engine hold`; and whether the
# holder shows up as a GPU user (it must have no context). Persistence mode is read, not changed.
# Run from the repository root with a built engine:
#   OUT=/some/dir ENGINE=build-head/engine/commatlas-engine bash scripts/device/driver_hold.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives the times}
ENGINE=${ENGINE:?set ENGINE to a built commatlas-engine}
exec > >(tee "$OUT/driver-hold.txt") 2>&1
took() {  # took CMD...: the wall seconds of one run of CMD, its output dropped
  local t0; t0=$(date +%s.%N)
  "$@" > /dev/null 2>&1
  python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$t0" "$(date +%s.%N)"
}
times() {  # times LABEL: info and topo, ROUNDS times
  for round in $(seq 1 "${ROUNDS:-3}"); do
    echo "$1 round $round: info $(took "$ENGINE" info --json) s, topo $(took "$ENGINE" topo --json) s"
  done
}
nvidia-smi --query-gpu=index,name,driver_version,persistence_mode --format=csv
times "nothing held"
python3 -c "
import glob, os, time
fds = [os.open(p, os.O_RDWR) for p in sorted(glob.glob('/dev/nvidia[0-9]*')) + ['/dev/nvidiactl']]
time.sleep(60)" &
files=$!
sleep 1
times "device files held open"
kill "$files"; wait "$files" 2>/dev/null
coproc HOLD { "$ENGINE" hold; }
read -r line <&"${HOLD[0]}"
echo "holder: $line"
times "commatlas-engine hold"
echo "GPU users while held (a holder with a context would be listed):"
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
holder=$HOLD_PID input=${HOLD[1]}
exec {input}>&-
wait "$holder"; echo "holder exited with $? once its input closed"
times "nothing held again"
