#!/usr/bin/env bash
# "Figures that hold" on nvidia-h100-x2 in two device calls (each well inside 10 minutes).
# Builds once against the CUDA-aware Open MPI carried in .device-carry/, then runs STAGE:
#   atlas  two identical default `commatlas run`s back to back (wall times), `commatlas compare` of
#          the pair, `--quick` twice (wall time; the second through scripts/run_phases.py), the
#          32-thread host memcpy three times (MEMCPY=0 leaves it out); CLOCKS=1 logs every GPU's
#          SM clock, power and use every 50 ms through the stage (nvidia-smi, clocks.csv) and then
#          runs the two ping-pongs that read slower alone than inside the full run, each alone
#   order  a default run, then `commatlas check-order` over every GPU family and host MPI
#          (scripts/device/order_check.sh), `--quick` on that build, the GPU-buffer OSU-method
#          reference against mpi.gpu_aware.* in 5 interleaved rounds, and the MPI libraries side by
#          side (scripts/device/mpi_libraries.sh; scripts/device/wire_witness.sh has the wire
#          check's planted link swap, left out here for time)
#   osu    the OSU-method reference against the engine in 5 interleaved rounds, host and device
#          buffers, 1 B - 16 MiB (osu_table.md: the 3%-or-own-spread rule per point)
# Usage (repository root, .device-carry carried): OUT=/some/dir STAGE=atlas|order|osu scripts/device/figures_that_hold.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
STAGE=${STAGE:?set STAGE to atlas, order or osu}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=$(mktemp -d)
exec > >(tee "$W/figures_that_hold.log") 2>&1
start=$SECONDS
phase() { echo; echo "== $* (t=$((SECONDS - start)) s, $(date -u +%FT%TZ))"; }
trap 'tar czf "$OUT/logs-$STAGE.tar.gz" -C "$W" --exclude="*/results.jsonl" . 2>/dev/null' EXIT

phase "machine"
nvidia-smi --query-gpu=index,name,driver_version --format=csv
nproc

ORIG_PATH=$PATH ORIG_LD=${LD_LIBRARY_PATH:-}
if [ "$STAGE" = order ]; then
  trap - EXIT  # order_check.sh packs six files; this stage adds one (at most 8 come back)
  # The order check builds, makes a default run (timed) and checks every family against it.
  DEADLINE=${DEADLINE:-270} OUT=$OUT bash scripts/device/order_check.sh
  phase "--quick on the same build"
  export OPAL_PREFIX=/opt/ompi-cuda PATH=/opt/ompi-cuda/bin:$PATH LD_LIBRARY_PATH=/opt/ompi-cuda/lib:${LD_LIBRARY_PATH:-}
  export COMMATLAS_ENGINE=$PWD/build-order/engine/commatlas-engine PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
  t0=$SECONDS
  timeout -s INT 90 python3 -m commatlas run --quick --out "$W/quick" > "$W/quick.log" 2>&1
  echo "quick: rc=$? wall=$((SECONDS - t0)) s"; tail -3 "$W/quick.log"
  rm -f "$W/quick/report.html"
  # The GPU-buffer OSU-method reference against mpi.gpu_aware.*: 5 interleaved rounds, each the
  # engine phase then commatlas-osu-ref (selecting reference.osu* runs it, with mpi.pingpong & co).
  phase "OSU method on device buffers, 5 rounds"
  t0=$SECONDS
  timeout -s INT 150 python3 -m commatlas run --suite mpi,mpi-gpu --sizes 1,64,4K,64K,1M,16M --repeat 5 \
    --only 'mpi.gpu_aware.pingpong,mpi.gpu_aware.bandwidth,mpi.gpu_aware.bibw,reference.osu*' \
    --out "$W/osu-gpu" > "$W/osu-gpu.log" 2>&1
  echo "osu-gpu: rc=$? wall=$((SECONDS - t0)) s"
  rm -f "$W/osu-gpu/report.html"
  python3 scripts/device/points_table.py --osu-rule "$W/osu-gpu/results.jsonl" | tee "$W/osu_device_table.md"
  # Which MPI library: the image's Open MPI against the carried CUDA-aware one (host buffers).
  phase "MPI libraries side by side"
  mkdir -p "$W/mpi-libraries"
  env -u OPAL_PREFIX -u COMMATLAS_ENGINE PATH="$ORIG_PATH" LD_LIBRARY_PATH="$ORIG_LD" OUT="$W/mpi-libraries" \
    SUITES=mpi SIZES=1,64,4K,64K,1M BUDGET=0.05 LIMIT=100 timeout 170 bash scripts/device/mpi_libraries.sh \
    > "$W/mpi-libraries.log" 2>&1
  echo "mpi libraries: rc=$?"; tail -12 "$W/mpi-libraries.log"
  rm -f "$W/mpi-libraries/run/report.html"
  tar czf "$OUT/quick-libraries.tar.gz" -C "$W" .
  exit 0
fi

phase "CUDA-aware Open MPI, then the engine against it"
source scripts/device/build_engine.sh build-fth "$W/build.log" || exit 1

run() {  # run NAME ARGS...: one timed commatlas run into $W/NAME
  local name=$1; shift
  phase "$name: commatlas run $*"
  echo "$name: commatlas run --out $name $*" >> "$W/commands.txt"
  local t0; t0=$(date +%s.%N)
  timeout -s INT 170 python3 -m commatlas run --out "$W/$name" "$@" > "$W/$name.log" 2>&1
  local rc=$?
  local wall; wall=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
  echo "$name: rc=$rc wall=${wall}s"; tail -4 "$W/$name.log"
  echo "$name $wall $rc $*" >> "$W/walls.txt"
  cp "$W/$name.log" "$W/$name/terminal.txt" 2>/dev/null
  rm -f "$W/$name/report.html"
}

if [ "${CLOCKS:-0}" = 1 ]; then
  nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,utilization.gpu,pstate \
    --format=csv,nounits -lms 50 > "$W/clocks.csv" 2>&1 &
  CLOCK_LOGGER=$!
fi
if [ "$STAGE" = osu ]; then
  trap - EXIT
  phase "OSU method against the engine, host and device buffers, 5 interleaved rounds"
  echo "osu-rounds: commatlas run --out osu-rounds --suite mpi,mpi-gpu --sizes 1,64,4K,64K,1M,16M --repeat 5 --only 'mpi.gpu_aware.pingpong,mpi.gpu_aware.bandwidth,mpi.gpu_aware.bibw,reference.osu*'" >> "$W/commands.txt"
  t0=$SECONDS
  timeout -s INT 200 python3 -m commatlas run --suite mpi,mpi-gpu --sizes 1,64,4K,64K,1M,16M --repeat 5 \
    --only 'mpi.gpu_aware.pingpong,mpi.gpu_aware.bandwidth,mpi.gpu_aware.bibw,reference.osu*' \
    --out "$W/osu-rounds" > "$W/osu-rounds.log" 2>&1
  echo "osu-rounds: rc=$? wall=$((SECONDS - t0)) s"
  rm -f "$W/osu-rounds/report.html" "$W/osu-rounds/answers.json"
  python3 scripts/device/points_table.py --osu-rule "$W/osu-rounds/results.jsonl" | tee "$W/osu_table.md"
  tar czf "$OUT/osu-rounds.tar.gz" -C "$W" osu-rounds osu-rounds.log osu_table.md commands.txt figures_that_hold.log
  exit 0
fi
run default
run default2
phase "compare default default2"
python3 -m commatlas compare "$W/default" "$W/default2" --html "$W/compare.html" > "$W/compare.txt" 2>&1
echo "compare: rc=$?"; head -30 "$W/compare.txt"
rm -f "$W/compare.html"
tar czf "$OUT/default.tar.gz" -C "$W" default default2 compare.txt walls.txt commands.txt
run quick --quick
# The second --quick through scripts/run_phases.py: where its seconds go (imports, engine queries,
# each phase, the report).
phase "quick2: scripts/run_phases.py run --quick"
echo "quick2: scripts/run_phases.py run --quick --out quick2" >> "$W/commands.txt"
timeout -s INT 120 python3 scripts/run_phases.py run --quick --out "$W/quick2" > "$W/quick2_phases.txt" 2>&1
echo "quick2: rc=$?"; tail -12 "$W/quick2_phases.txt"
rm -f "$W/quick2/report.html"
kept=(quick quick2 quick2_phases.txt)
if [ "${MEMCPY:-1}" = 1 ]; then
  for i in 1 2 3; do
    run memcpy-$i --suite host --only 'host.memcpy,reference.host_memcpy' --sizes 4K,1M,16M
    kept+=("memcpy-$i")
  done
fi
if [ "${CLOCKS:-0}" = 1 ]; then
  run alone-nccl-launch --only nccl.pingpong_launch
  run alone-gpu-aware-pingpong --only mpi.gpu_aware.pingpong
  kill "$CLOCK_LOGGER" 2>/dev/null
  gzip -9 "$W/clocks.csv"
  kept+=(alone-nccl-launch alone-gpu-aware-pingpong clocks.csv.gz)
fi
tar czf "$OUT/quick-memcpy.tar.gz" -C "$W" "${kept[@]}" walls.txt commands.txt
phase "done"
