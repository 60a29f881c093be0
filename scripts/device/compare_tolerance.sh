#!/usr/bin/env bash
# How `commatlas compare` judges two identical default runs back to back on this machine. Two
# `commatlas run` with no options (each stopped after RUN_LIMIT_S seconds if the default run is
# longer: the points both measured are compared), then `commatlas compare` (its verdict line:
# identical runs must be "no change" at >= 95% of points) and scripts/compare_tolerance.py (the
# same, with the rule's tolerances, and against a planted 15% slowdown of the second run, which
# must be flagged). Everything lands under $OUT; about 5 minutes.
# Usage: OUT=dir bash scripts/device/compare_tolerance.sh   [RUN_LIMIT_S=100] [RUN_ARGS="..."]
set -uo pipefail
export NCCL_NVLS_ENABLE=0
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the output folder}"
limit=${RUN_LIMIT_S:-100}
read -r -a extra <<< "${RUN_ARGS:-}"
{ cmake -B build-dev -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_BUILD_TESTS=OFF &&
  cmake --build build-dev -j16; } > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
export COMMATLAS_ENGINE=build-dev/engine/commatlas-engine PYTHONPATH=python PYTHONUNBUFFERED=1
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
for run in a b; do
  # SIGTERM is Ctrl-C to commatlas: it stops the engine and keeps every record (exit 130).
  timeout -s TERM "$limit" python3 -m commatlas run --out "$OUT/run-$run" "${extra[@]}" > "$OUT/run-$run.log" 2>&1
  echo "run $run: exit $? ($(grep -c '"type":"result"' "$OUT/run-$run/results.jsonl") results)"
done
python3 -m commatlas compare "$OUT/run-a" "$OUT/run-b" --html "$OUT/compare.html" > "$OUT/compare.txt" 2>&1
echo "compare: exit $?"; grep -E "common points|^rule:" "$OUT/compare.txt"
python3 scripts/compare_tolerance.py "$OUT/run-a" "$OUT/run-b" | tee "$OUT/tolerance.txt"
tar czf "$OUT/logs.tgz" -C "$OUT" run-a/engine.log run-b/engine.log build.log 2>/dev/null
