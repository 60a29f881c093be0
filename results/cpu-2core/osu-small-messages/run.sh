#!/usr/bin/env bash
# Small-message host MPI bandwidth and bibw against the OSU method, before and after the window
# loop change, on the shared 2-core CPU machine (Open MPI, 2 ranks). Each run is `commatlas run
# --repeat 5`: every pass runs the engine's MPI phase and then commatlas-osu-ref, so engine and
# reference interleave 5 times. The before and after engines alternate, twice each.
#   BEFORE=dir AFTER=dir OUT=dir [TURNS="1 2"] bash run.sh   (each dir: commatlas-engine + commatlas-osu-ref)
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:?}; BEFORE=${BEFORE:?}; AFTER=${AFTER:?}
SIZES=${SIZES:-1,64,512,4K}
for turn in ${TURNS:-1 2}; do
  for which in before after; do
    dir=$BEFORE; [[ $which == after ]] && dir=$AFTER
    out="$OUT/$which-$turn"
    echo "$(date -u +%T) $which turn $turn: uptime $(cut -d' ' -f1-3 /proc/loadavg)"
    COMMATLAS_ENGINE=$dir/commatlas-engine PYTHONPATH=python python3 -m commatlas run --suite mpi \
      --only mpi.bandwidth,mpi.bibw --sizes "$SIZES" --repeat 5 --out "$out" > "$out.log" 2>&1 || echo "  exit $?"
  done
done
