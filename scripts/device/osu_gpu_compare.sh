#!/usr/bin/env bash
# GPU-aware MPI against the OSU method on device buffers: mpi.gpu_aware.pingpong / bandwidth / bibw
# (their device -> device variant) beside commatlas-osu-ref --buffers device (osu_latency/osu_bw/
# osu_bibw with OSU 7.x's `-d cuda D D`: cudaMalloc on local rank mod GPU count, cudaMemset), under
# the CUDA-aware Open MPI 4.1.4 of /work/shared/gpu-mpi (carried in .device-carry/).
#
# The rounds are `commatlas run --repeat N`: each pass runs the MPI phase, then the reference, so
# engine and reference interleave N times; the report's "Engine vs OSU method" table has one
# device row per benchmark and size with both spreads and its verdict. Acceptance: medians within
# 3%, or within the reference's own round-to-round spread, 1 B - 16 MiB.
#   Usage (repository root, .device-carry carried, 2 GPUs):
#     OUT=/some/dir [ROUNDS=5] [SIZES=1,64,4K,64K,1M,16M] scripts/device/osu_gpu_compare.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
ROUNDS=${ROUNDS:-5}
SIZES=${SIZES:-1,64,4K,64K,1M,4M,16M}
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the lent machines
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$OUT"
CUDA_OMPI=/opt/ompi-cuda
tar xzf .device-carry/openmpi-4.1.4-cuda-ubuntu24.tgz -C /opt && ls $CUDA_OMPI/bin/mpicc || exit 1
export OPAL_PREFIX=$CUDA_OMPI PATH=$CUDA_OMPI/bin:$PATH LD_LIBRARY_PATH=$CUDA_OMPI/lib:${LD_LIBRARY_PATH:-}
BUILD=${BUILD:-build-osu-gpu}
{ cmake -B "$BUILD" -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_WITH_CUDA=ON -DCOMMATLAS_WITH_MPI=ON \
    -DCOMMATLAS_BUILD_TESTS=OFF -DMPI_C_COMPILER=$CUDA_OMPI/bin/mpicc &&
  cmake --build "$BUILD" -j16 --target commatlas-engine commatlas-osu-ref; } > "$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log"; exit 1; }
export COMMATLAS_ENGINE=$PWD/$BUILD/engine/commatlas-engine  # commatlas-osu-ref is found next to it
{ nvidia-smi topo -m; mpirun --version | head -1; } > "$OUT/machine.txt" 2>&1
# The reference refuses device buffers (exit 3) unless this MPI reports CUDA support: say what it says.
mpirun -n 2 "$PWD/$BUILD/engine/commatlas-osu-ref" --tests latency --sizes 8 --buffers device | tee "$OUT/ref-check.txt"

command=(python3 -m commatlas run --suite mpi-gpu
         --only mpi.gpu_aware.pingpong,mpi.gpu_aware.bandwidth,mpi.gpu_aware.bibw
         --sizes "$SIZES" --repeat "$ROUNDS" --out "$OUT/run")
echo "PYTHONPATH=python ${command[*]}" > "$OUT/commands.txt"
PYTHONPATH=python timeout 360 "${command[@]}" 2>&1 | tee "$OUT/run.log"
PYTHONPATH=python python3 - "$OUT/run/results.jsonl" <<'EOF' | tee "$OUT/osu_device_table.md"
import sys
from pathlib import Path
from commatlas.analysis import osu
from commatlas.io.records import read_records
rows = [r for r in osu.comparison_rows(read_records(Path(sys.argv[1]))) if r.benchmark.startswith("mpi.gpu_aware.")]
print("| benchmark | size | engine | OSU -d cuda D D | engine/OSU | spread engine / OSU | rounds | rule (3% or OSU spread) | verdict |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
for r in rows:
    print(f"| {r.benchmark} | {r.bytes} | {r.engine_text} | {r.reference_text} | {r.ratio:.3f} | "
          f"{100 * r.engine_spread:.1f}% / {100 * r.reference_spread:.1f}% | {r.rounds} | "
          f"{'meets' if r.agree else 'MISSES'} | {r.verdict.text} |")
print(f"\n{sum(r.agree for r in rows)} of {len(rows)} device points meet the rule")
EOF
