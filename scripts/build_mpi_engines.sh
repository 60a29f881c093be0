#!/usr/bin/env bash
# One engine per MPI library, side by side: each is a CMake build of this source against one MPI
# compiler wrapper (FindMPI's MPI_C_COMPILER), with that library's own mpiexec recorded in it
# (MPIEXEC_EXECUTABLE: `commatlas run --mpi` starts each engine with its own launcher). The
# commatlas-osu-ref of each build is linked against the same library.
#
#   scripts/build_mpi_engines.sh [OUT]                 every library found: Debian's mpicc.openmpi and
#                                                      mpicc.mpich, or WRAPPERS
#   WRAPPERS="/opt/mvapich/bin/mpicc:/opt/mvapich/bin/mpiexec mpicc.mpich" scripts/build_mpi_engines.sh
#   CMAKE_ARGS="-DCOMMATLAS_WITH_CUDA=OFF" ...        passed to every configure (default: the engine's defaults)
#   SKIP_DEFAULT=1 ...                                 leave out the library plain `mpicc` is (the one
#                                                      `pip install .` already built the engine against)
#
# Each engine lands in OUT/<wrapper>/engine/commatlas-engine (OUT: build-mpi). The last line
# printed is the COMMATLAS_MPI_ENGINES setting that lets `commatlas run --mpi openmpi,mpich` find
# them by name; a plain `pip install .` is unaffected (it builds against whichever MPI CMake finds).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build-mpi}
JOBS=${JOBS:-$(nproc)}
if [[ -z "${WRAPPERS:-}" ]]; then
  WRAPPERS=""
  # Debian/Ubuntu: each library's wrapper and launcher carry its name; plain mpicc is one of them.
  for lib in openmpi mpich; do
    if command -v "mpicc.$lib" >/dev/null && command -v "mpiexec.$lib" >/dev/null; then
      WRAPPERS+=" $(command -v mpicc.$lib):$(command -v mpiexec.$lib)"
    fi
  done
  [[ -n "$WRAPPERS" ]] || WRAPPERS="$(command -v mpicc || true):$(command -v mpiexec || true)"
fi
engines=()
for pair in $WRAPPERS; do
  wrapper=${pair%%:*}
  launcher=${pair#*:}
  [[ "$launcher" != "$pair" ]] || launcher=""
  [[ -x "$wrapper" || -n "$(command -v "$wrapper" 2>/dev/null)" ]] || { echo "no MPI wrapper $wrapper" >&2; exit 2; }
  if [[ -n "${SKIP_DEFAULT:-}" ]] && command -v mpicc >/dev/null &&
     [[ "$(readlink -f "$(command -v mpicc)")" == "$(readlink -f "$(command -v "$wrapper")")" ]]; then
    echo "== $wrapper is the default mpicc: left out" >&2
    continue
  fi
  # Two installations can share a wrapper name (/usr/bin/mpicc, /opt/ompi-cuda/bin/mpicc): a
  # wrapper given by path is named by its whole path, so each gets a build folder of its own.
  name=$(basename "$wrapper")
  [[ "$wrapper" == */* ]] && name=$(echo "${wrapper#/}" | tr '/' '_')
  dir="$OUT/$name"
  echo "== $name -> $dir" >&2
  # shellcheck disable=SC2086
  cmake -S . -B "$dir" -DMPI_C_COMPILER="$wrapper" ${launcher:+-DMPIEXEC_EXECUTABLE="$launcher"} \
        -DCOMMATLAS_WITH_MPI=ON ${CMAKE_ARGS:-} >&2
  cmake --build "$dir" -j"$JOBS" --target commatlas-engine commatlas-osu-ref >&2
  "$dir/engine/commatlas-engine" info --json | python3 -c \
    'import json,sys; m=json.load(sys.stdin)["backends"]["mpi"]; print("   ", m["library_name"], m["library_release"], "launched by", m["mpiexec"] or "?")' >&2
  engines+=("$PWD/$dir/engine/commatlas-engine")
done
(IFS=:; echo "export COMMATLAS_MPI_ENGINES=${engines[*]}")
