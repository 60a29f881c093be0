#!/usr/bin/env bash
# Does the harness add cost? On one GPU machine: the harness against its bare reference loops, with
# passes enough (--repeat 3) to know each loop's own run-to-run spread.
#   memcpy-new-1, memcpy-new-2  host.memcpy beside reference.host_memcpy, this tree (host-only build)
#   memcpy-old-1, memcpy-old-2  the same with the engine of OLD_SRC (a `git archive --prefix=old/`
#                               tarball; the runs alternate new, old, new, old), if it is given
#   pingpong                    mpi.pingpong beside reference.mpi_pingpong, 2 ranks, this tree
# Every run folder is packed into one tarball ($OUT returns 8 files at most).
# Usage (repository root): OUT=/some/dir [OLD_SRC=.device-carry/old-src.tgz] scripts/device/harness_check.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
W=$(mktemp -d)
exec > >(tee "$OUT/harness.log") 2>&1

build() {  # build DIR SOURCE: a host-only engine (no CUDA), MPI where the machine has it
  local start; start=$(date +%s)
  { cmake -S "$2" -B "$1" -DCOMMATLAS_WITH_CUDA=OFF -DCOMMATLAS_BUILD_TESTS=OFF &&
    cmake --build "$1" -j"$(nproc)"; } > "$W/build-$(basename "$1").log" 2>&1 || { tail -30 "$W/build-$(basename "$1").log"; return 1; }
  echo "built $1 from $2 in $(( $(date +%s) - start )) s"
}
echo "== build ($(date -u +%FT%TZ)); $(nproc) CPUs"
build "$PWD/build-host" "$PWD" || exit 1
engines=(new)
if [ -n "${OLD_SRC:-}" ] && [ -f "$OLD_SRC" ]; then
  tar xzf "$OLD_SRC" -C "$W" && build "$W/build-old" "$W/old" && engines+=(old)
fi
lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|NUMA node)' | tee "$W/lscpu.txt"
export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1

run() {  # run NAME ENGINE ARGS...
  local name=$1 engine=$2; shift 2
  echo "== $name: commatlas run $* ($(date -u +%FT%TZ))"
  COMMATLAS_ENGINE=$engine timeout -s INT 300 python3 -m commatlas run --out "$W/$name" "$@" > "$W/$name.log" 2>&1
  echo "$name: rc=$?"
  cp "$W/$name.log" "$W/$name/terminal.txt" 2>/dev/null
  python3 scripts/device/points_table.py --harness-check "$W/$name"
}

memcpy=(--suite host --only host.memcpy,reference.host_memcpy --repeat 3)
for pass in 1 2; do
  for e in "${engines[@]}"; do
    engine=$PWD/build-host/engine/commatlas-engine
    [ "$e" = old ] && engine=$W/build-old/engine/commatlas-engine
    run "memcpy-$e-$pass" "$engine" "${memcpy[@]}"
  done
done
run pingpong "$PWD/build-host/engine/commatlas-engine" --suite mpi --only mpi.pingpong,reference.mpi_pingpong --repeat 3

tar czf "$OUT/harness.tar.gz" -C "$W" --exclude='build-old' --exclude='old' .
ls -la "$OUT"
exit 0
