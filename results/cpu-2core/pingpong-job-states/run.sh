#!/usr/bin/env bash
# 20 rounds, interleaved: a job of the engine's mpi.pingpong at 1 B alone, then a job of the
# OSU-method program's osu_latency at 1 B, both under the launch commatlas uses on this VM.
set -euo pipefail
E=${E:?set E to the folder holding commatlas-engine and commatlas-osu-ref}
L=(mpiexec --allow-run-as-root --map-by core --bind-to core -n 2)
for i in $(seq -w 1 20); do
  "${L[@]}" "$E/commatlas-engine" run --mpi --out "engine-$i.jsonl" --only mpi.pingpong --sizes 1 --progress none > /dev/null 2>&1
  "${L[@]}" "$E/commatlas-osu-ref" --tests latency --sizes 1 --passes 1 > "osu-$i.jsonl" 2> /dev/null
done
