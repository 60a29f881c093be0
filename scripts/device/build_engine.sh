# shellcheck shell=bash
# Sourced by the device scripts: unpack the CUDA-aware Open MPI carried in .device-carry/ (see
# ../shared/gpu-mpi) into /opt/ompi-cuda, build the engine for sm_90 against it into BUILD_DIR,
# and export what `python3 -m commatlas` needs to find that engine and commatlas-osu-ref.
#   source scripts/device/build_engine.sh BUILD_DIR LOG_FILE
#   source scripts/device/build_engine.sh --mpi-only   (the MPI alone, no engine)
# Returns non-zero (after printing the build log's tail) when the build fails.
# The carried CUDA-aware Open MPI, unpacked into /opt/ompi-cuda and first on PATH (a probe that only
# needs mpicxx and mpiexec calls this alone: `source scripts/device/build_engine.sh --mpi-only`).
carried_ompi() {
  ompi=/opt/ompi-cuda
  tar xzf .device-carry/openmpi-4.1.4-cuda-ubuntu24.tgz -C /opt || return 1
  export OPAL_PREFIX=$ompi PATH=$ompi/bin:$PATH LD_LIBRARY_PATH=$ompi/lib:${LD_LIBRARY_PATH:-}
}
build_engine() {
  local dir=$1 log=$2 t0=$SECONDS
  local ompi
  carried_ompi || return 1
  { cmake -B "$dir" -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_WITH_CUDA=ON -DCOMMATLAS_WITH_NCCL=ON \
      -DCOMMATLAS_WITH_MPI=ON -DCOMMATLAS_BUILD_TESTS=OFF -DMPI_C_COMPILER=$ompi/bin/mpicc &&
    cmake --build "$dir" -j"$(nproc)"; } > "$log" 2>&1 || { tail -40 "$log"; return 1; }
  echo "build: $((SECONDS - t0)) s"
  export COMMATLAS_ENGINE=$PWD/$dir/engine/commatlas-engine PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
  export PATH=$PWD/$dir/engine:$PATH  # commatlas-osu-ref beside the engine
}
if [ "${1:-}" = --mpi-only ]; then carried_ompi; else build_engine "$@"; fi
