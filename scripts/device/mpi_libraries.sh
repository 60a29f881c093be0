#!/usr/bin/env bash
# Which MPI library: one engine per MPI installation on this machine, then `commatlas run --mpi`
# runs the MPI phases once per library, each under its own mpiexec, into one run directory
# ($OUT/run: results.jsonl, answers.json, report.html). Libraries it looks for:
#   the image's Open MPI (mpicc/mpiexec on PATH; 4.1.6 on the lent machines, not CUDA-aware);
#   the CUDA-aware Open MPI 4.1.4 of /work/shared/gpu-mpi, when .device-carry/ holds its tarball
#     (carry .device-carry; unpacked to /opt/ompi-cuda);
#   MPICH, when mpicc.mpich or /opt/mpich/bin/mpicc exists: none on the lent machines, so Debian
#     12's MPICH 4.0.2 (host buffers only, ch4:ucx) is carried as .device-carry/mpich-*.t*z
#     (opt/mpich with its wrappers pointed there; scripts/device/pack_mpich.sh makes it).
# Two Open MPI builds have one name, so --mpi gets the engines' paths, not names.
#   OUT=/some/dir scripts/device/mpi_libraries.sh
#   SUITES=mpi,mpi-gpu (default) RANKS= (default: one per GPU, at least 2; e.g. 2,all)
#   SIZES=... (default: the engine's), BUDGET=0.05 seconds per point, LIMIT=420 seconds for the run
# Prints each library's 1 B latency and peak bandwidth (host buffers, 2 ranks) at the end.
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives the run}
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the lent machines
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$OUT"
exec > >(tee "$OUT/mpi_libraries.log") 2>&1
SUITES=${SUITES:-mpi,mpi-gpu}
BUDGET=${BUDGET:-0.05}
LIMIT=${LIMIT:-420}

echo "== machine ($(date -u +%T))"
nvidia-smi --query-gpu=index,name,driver_version --format=csv 2>/dev/null || echo "no nvidia-smi"
nproc

echo "== libraries"
wrappers="$(command -v mpicc):$(command -v mpiexec || command -v mpirun)"
if [[ -f .device-carry/openmpi-4.1.4-cuda-ubuntu24.tgz ]]; then
  tar xzf .device-carry/openmpi-4.1.4-cuda-ubuntu24.tgz -C /opt &&
    wrappers+=" /opt/ompi-cuda/bin/mpicc:/opt/ompi-cuda/bin/mpiexec"
fi
if compgen -G ".device-carry/mpich-*.t*z" >/dev/null; then
  tar xf .device-carry/mpich-*.t*z -C / &&
    export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/opt/mpich/lib  # its UCX, hwloc and Slurm libraries
fi
for mpich in "$(command -v mpicc.mpich 2>/dev/null):$(command -v mpiexec.mpich 2>/dev/null)" \
             "/opt/mpich/bin/mpicc:/opt/mpich/bin/mpiexec"; do
  [[ -x "${mpich%%:*}" ]] && { wrappers+=" $mpich"; break; }
done
echo "$wrappers" | tr ' ' '\n'

echo "== build one engine per library ($(date -u +%T))"
start=$SECONDS
WRAPPERS="$wrappers" JOBS=$(nproc) \
  CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_BUILD_TESTS=OFF" \
  scripts/build_mpi_engines.sh build-libs > "$OUT/engines.env" 2> "$OUT/build.log" ||
  { tail -40 "$OUT/build.log"; exit 1; }
grep -E "^    |^== " "$OUT/build.log"
echo "built in $((SECONDS - start)) s"
# shellcheck disable=SC1091
source "$OUT/engines.env"
IFS=: read -r -a engines <<< "$COMMATLAS_MPI_ENGINES"
export COMMATLAS_ENGINE=${engines[0]} PYTHONPATH=python PYTHONUNBUFFERED=1

echo "== commatlas run --mpi (one phase per library) ($(date -u +%T))"
cmd=(python3 -m commatlas run --mpi "$(IFS=,; echo "${engines[*]}")" --suite "$SUITES"
     --time-budget "$BUDGET" --watchdog 60 --out "$OUT/run")
[[ -n "${RANKS:-}" ]] && cmd+=(--ranks "$RANKS")
[[ -n "${SIZES:-}" ]] && cmd+=(--sizes "$SIZES")
echo "timeout $LIMIT ${cmd[*]}" | tee "$OUT/command.txt"
timeout "$LIMIT" "${cmd[@]}"
echo "rc=$? in $((SECONDS - start)) s"

echo "== per library: 1 B latency and peak bandwidth (host buffers, 2 ranks)"
python3 scripts/mpi_library_figures.py "$OUT/run" | tee "$OUT/figures.md"
