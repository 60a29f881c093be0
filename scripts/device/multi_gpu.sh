#!/usr/bin/env bash
# Multi-GPU evidence (the default run on every GPU, and its wall time projected to 4 and 8 GPUs) in one
# device call on nvidia-h200-x2 (or x4/x8): build for sm_90 against the CUDA-aware Open MPI of
# /work/shared/gpu-mpi (carried in .device-carry/), then
#   default   `time commatlas run` on every GPU (one rank per GPU in the MPI phase): answers.json,
#             report, the GPU i -> GPU j rows of the map; then its projection to 4 and 8 GPUs
#   tune      `commatlas run --tune nccl` over NCCL point-to-point, allreduce and two patterns
#   patterns  every pattern over every mechanism, one rank per GPU (NCCL included)
#   planted   the copy, NCCL, IPC and MPI paths at 3 sizes (so buffers are reused across sizes) with and
#             without COMMATLAS_TEST_SKIP_MOVE=1: every byte-checked point must end "data check failed"
#   quick     `time commatlas run --quick` on every GPU
#   overhead  nccl.allreduce and nccl.bandwidth beside their bare loops (reference.nccl_*) at 8 B,
#             64 KiB and 256 MiB, three interleaved passes (--repeat 3) for the spread; the bare
#             loops' records keep their host enqueue time (timing.host_enqueue_s)
#   imageompi the image's Open MPI (not CUDA-aware), --suite mpi-gpu --quick: GPU-aware MPI recorded as skipped
#   onegpu    `time commatlas run` with CUDA_VISIBLE_DEVICES=0 (the one-GPU wall time on this machine)
#   onequick  the same with --quick
# Each run folder is packed into one tarball ($OUT returns 8 files at most).
# Usage (repository root, .device-carry carried): OUT=/some/dir [RUNS="default tune patterns"] scripts/device/multi_gpu.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the lent machines
W=$(mktemp -d)
exec > >(tee "$W/multi_gpu.log") 2>&1
start=$SECONDS
phase() { echo; echo "== $* (t=$((SECONDS - start)) s, $(date -u +%FT%TZ))"; }

phase "machine"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,clocks.max.mem --format=csv | tee "$W/nvidia-smi.csv"
nvidia-smi topo -m > "$W/topo-m.txt" 2>&1; head -5 "$W/topo-m.txt"

IMAGE_PATH=$PATH IMAGE_LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}  # before build_engine.sh puts its MPI first
IMAGE_MPICC=$(command -v mpicc)

phase "CUDA-aware Open MPI, then the engine against it"
source scripts/device/build_engine.sh build-multi "$W/build.log" || exit 1
ompi_info --parsable --all 2>/dev/null | grep mpi_built_with_cuda_support
$COMMATLAS_ENGINE info > "$W/engine-info.json"
python3 -m commatlas list > "$W/list.txt" 2>&1; tail -3 "$W/list.txt"

run() {  # run NAME LIMIT ARGS...: one `time commatlas run` into $W/NAME, stopped at LIMIT seconds
  local name=$1 limit=$2; shift 2
  phase "commatlas run $*"
  echo "commatlas run --out $name $*" >> "$W/commands.txt"
  local t0; t0=$(date +%s.%N)
  { time timeout -s INT "$limit" python3 -m commatlas run --out "$W/$name" "$@" > "$W/$name.log" 2>&1; } 2> "$W/$name.time"
  local rc=$?
  local wall; wall=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
  echo "$name: rc=$rc wall=${wall}s"; tail -3 "$W/$name.log"
  echo "$name $wall $rc $*" >> "$W/walls.txt"
  cp "$W/$name.log" "$W/$name/terminal.txt" 2>/dev/null
  tar czf "$OUT/$name.tar.gz" -C "$W" "$name"  # now: a later step that overruns the call keeps this one
}

image_ompi() {  # the image's Open MPI, not CUDA-aware: GPU-aware MPI must be a recorded skip, never a device pointer
  phase "the image's Open MPI ($IMAGE_MPICC)"
  # A subshell on purpose: the image's MPI for this build and run only. Built where build_engine.sh's
  # OPAL_PREFIX is set, the image's mpicc wrapper hands out the carried library's paths instead.
  # shellcheck disable=SC2030,SC2031
  ( unset OPAL_PREFIX
    export PATH=$IMAGE_PATH LD_LIBRARY_PATH=$IMAGE_LD_LIBRARY_PATH COMMATLAS_ENGINE=$PWD/build-image/engine/commatlas-engine
    rm -rf build-image
    { cmake -B build-image -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_WITH_CUDA=ON -DCOMMATLAS_WITH_NCCL=ON \
        -DCOMMATLAS_WITH_MPI=ON -DCOMMATLAS_BUILD_TESTS=OFF -DMPI_C_COMPILER="$IMAGE_MPICC" &&
      cmake --build build-image -j"$(nproc)"; } > "$W/build-image.log" 2>&1 || { tail -20 "$W/build-image.log"; exit 1; }
    "$COMMATLAS_ENGINE" info --json > "$W/engine-info-image.json" 2>&1
    run imageompi 90 --suite mpi-gpu --quick --only 'mpi.gpu_aware.*,mpi.staged.pingpong' )
}

planted() {  # both GPUs, one rank per GPU for the MPI paths; records in $W/planted
  mkdir -p "$W/planted"
  local mode skip
  for mode in real planted; do
    skip=0; [ "$mode" = planted ] && skip=1
    phase "planted no-op: $mode"
    COMMATLAS_TEST_SKIP_MOVE=$skip timeout 100 "$COMMATLAS_ENGINE" run \
      --only 'gpu.copy_ce,gpu.copy_sm,gpu.stream_copy,nccl.single.bandwidth,nccl.single.allreduce,nccl.single.alltoall' \
      --sizes 64M,1M,64K --time-budget 0.01 --watchdog 30 --progress none --out "$W/planted/single-$mode.jsonl" \
      > "$W/planted/single-$mode.log" 2>&1
    echo "single-$mode: rc=$?"
    COMMATLAS_TEST_SKIP_MOVE=$skip timeout 120 mpirun --allow-run-as-root -n 2 -x NCCL_NVLS_ENABLE -x COMMATLAS_TEST_SKIP_MOVE \
      -x OPAL_PREFIX -x LD_LIBRARY_PATH -x PATH "$COMMATLAS_ENGINE" run --mpi \
      --only 'mpi.staged.bandwidth,mpi.staged.pingpong,mpi.staged.allreduce,mpi.gpu_aware.bandwidth,mpi.gpu_aware.pingpong,mpi.gpu_aware.allreduce,ipc.bandwidth,ipc.pingpong,nccl.bandwidth,nccl.pingpong,nccl.allreduce,nccl.alltoall,mpi.bandwidth,mpi.allreduce' \
      --sizes 64M,1M,64K --time-budget 0.01 --watchdog 30 --progress none --out "$W/planted/mpi-$mode.jsonl" \
      > "$W/planted/mpi-$mode.log" 2>&1
    echo "mpi-$mode: rc=$?"
  done
  python3 - "$W/planted" <<'EOF'
import json, sys
from collections import Counter
from pathlib import Path
d = Path(sys.argv[1])
for part in ("single", "mpi"):
    for mode in ("real", "planted"):
        f = d / f"{part}-{mode}.jsonl"
        recs = [json.loads(l) for l in f.read_text().splitlines() if l.strip()] if f.exists() else []
        kinds = Counter(r["type"] for r in recs if r.get("type") in ("result", "error", "skip"))
        checked = [r for r in recs if r.get("type") == "result" and r["verified"]["method"] == "bytes"]
        errors = [r for r in recs if r.get("type") == "error"]
        bad = [r for r in errors if not r["message"].startswith("data check failed")]
        print(f"{part}-{mode}: {dict(kinds)}; results checked by bytes {len(checked)}; errors not a data check {len(bad)}")
        for r in bad[:5]:
            print("   ", r["benchmark"], r["bytes"], r["message"][:150])
EOF
  tar czf "$OUT/planted.tar.gz" -C "$W" planted
}

RUNS=${RUNS:-default tune patterns}
for name in $RUNS; do
  case $name in
    default) run default 200
      echo "--- first screen"; head -45 "$W/default.log"
      python3 scripts/minute_report.py --project "$W/default" > "$W/default/projection.txt" 2>&1
      tail -4 "$W/default/projection.txt"; tar czf "$OUT/default.tar.gz" -C "$W" default ;;
    tune) run tune 200 --tune nccl --only 'nccl.bandwidth,nccl.allreduce,pattern.halo2d.nccl,pattern.bucketed_allreduce.nccl' \
            --sizes 8,64K,1M,16M,256M --time-budget 0.05 --watchdog 40 ;;
    patterns) run patterns 110 --only 'pattern.*' --time-budget 0.05 --watchdog 40 ;;
    default2) run default2 200 ;;  # the same command again: compare default default2
    quick) run quick 60 --quick ;;
    overhead)  # the harness against bare nccl-tests-style loops, one rank per GPU
      run overhead 180 --full --only 'nccl.allreduce,nccl.bandwidth,reference.nccl_*' --sizes 8,64K,256M \
        --repeat 3 --watchdog 60
      python3 scripts/device/points_table.py --harness-check "$W/overhead" | tee "$W/overhead/harness-check.txt" ;;
    imageompi) image_ompi ;;
    planted) planted ;;
    onequick) CUDA_VISIBLE_DEVICES=0 run onequick 60 --quick ;;
    onegpu) CUDA_VISIBLE_DEVICES=0 run onegpu 120
      python3 scripts/device/points_table.py --harness-check "$W/onegpu" ;;
  esac
done

phase "records"
folders=${RUNS//planted/}
for name in $folders; do
  python3 - "$W/$name/results.jsonl" "$name" <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
end = [r for r in recs if r.get("type") == "end"]
res = [r for r in recs if r.get("type") == "result"]
over = [r for r in res if (r.get("peak") or {}).get("fraction", 0) > 1.0]
print(sys.argv[2], "results", len(res), "errors", sum(r.get("type") == "error" for r in recs),
      "skips", sum(r.get("type") == "skip" for r in recs), "end wall_s", end[-1].get("wall_s") if end else None,
      "fractions > 1:", len(over))
for r in recs:
    if r.get("type") == "error":
        print("  error", r.get("benchmark"), r.get("bytes"), r.get("message", "")[:160])
EOF
done
cat "$W/walls.txt"
tar czf "$OUT/logs.tar.gz" -C "$W" multi_gpu.log build.log list.txt engine-info.json nvidia-smi.csv topo-m.txt \
  walls.txt commands.txt default.log quick.log tune.log patterns.log onegpu.log onequick.log overhead.log imageompi.log build-image.log engine-info-image.json 2>/dev/null
echo "total $((SECONDS - start)) s"
ls -la "$OUT"
exit 0
