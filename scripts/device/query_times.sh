#!/usr/bin/env bash
# How long the engine's start-up queries take (`commatlas run` asks info, topo and list side by
# side before it plans), each alone and the three together, ROUNDS times (3): whether one query
# answering all three would start a run sooner. Needs a built engine (ENGINE, default
# build-order/engine/commatlas-engine) and the carried Open MPI unpacked in /opt/ompi-cuda.
#   OUT=/some/dir [ENGINE=...] bash scripts/device/query_times.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives the times}
ENGINE=${ENGINE:-build-order/engine/commatlas-engine}
export OPAL_PREFIX=/opt/ompi-cuda LD_LIBRARY_PATH=/opt/ompi-cuda/lib:${LD_LIBRARY_PATH:-}
now() { date +%s.%N; }
took() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$1" "$2"; }
for round in $(seq 1 "${ROUNDS:-3}"); do
  for query in info topo list; do
    t0=$(now); "$ENGINE" "$query" --json > /dev/null 2>&1; rc=$?
    echo "round $round $query alone: $(took "$t0" "$(now)") s rc=$rc"
  done
  t0=$(now)
  "$ENGINE" info --json > /dev/null 2>&1 & "$ENGINE" topo --json > /dev/null 2>&1 & "$ENGINE" list --json > /dev/null 2>&1 &
  wait
  echo "round $round all three side by side: $(took "$t0" "$(now)") s"
done | tee "$OUT/query-times.txt"
