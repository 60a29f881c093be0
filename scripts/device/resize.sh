#!/usr/bin/env bash
# Size sweeps inside one preparation (Workload::resize) on the GPU message paths, 2 GPUs.
#
# Builds the mpiexec test program (engine/tests/mpiexec/) and the engine against the CUDA-aware
# Open MPI of /work/shared/gpu-mpi, then on 2 ranks, one GPU each:
#   tests:   every point-to-point and collective variant resized from 1 MiB measures and checks as
#            one prepared at the smaller size (staged and GPU-aware MPI, CUDA IPC, NCCL, host MPI);
#            managed-memory variants refuse; resize poisons the receive side; no resize past the
#            allocation;
#   planted: the same program with COMMATLAS_TEST_SKIP_MOVE=1: every resized point fails its check;
#   engine:  nccl.*, ipc.*, mpi.staged.* and mpi.gpu_aware.* at their default sizes, for
#            cost.prepare_s per point (compare with results/nvidia-h200-x2/atlas-2gpu/default).
# Needs in .device-carry/ (carried): openmpi-4.1.4-cuda-ubuntu24.tgz (/work/shared/gpu-mpi) and
# gtest/{include/gtest,lib/libgtest.a} (the image has no GoogleTest: copy /usr/include/gtest and
# /usr/lib/x86_64-linux-gnu/libgtest.a from a Debian machine with libgtest-dev).
# Usage (repository root): OUT=dir bash scripts/device/resize.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the lent machines
cd "$(dirname "$0")/../.."
mkdir -p "$OUT"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
tar xzf .device-carry/openmpi-4.1.4-cuda-ubuntu24.tgz -C /opt || exit 1
export OPAL_PREFIX=/opt/ompi-cuda PATH=/opt/ompi-cuda/bin:$PATH LD_LIBRARY_PATH=/opt/ompi-cuda/lib:${LD_LIBRARY_PATH:-}
start=$SECONDS
{ cmake -S . -B build-dev-resize -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_BUILD_TESTS=ON \
    -DGTEST_ROOT="$PWD/.device-carry/gtest" -DMPI_C_COMPILER=/opt/ompi-cuda/bin/mpicc &&
  cmake --build build-dev-resize -j"$(nproc)" --target commatlas-mpiexec-tests commatlas-engine; } > "$OUT/build.log" 2>&1 ||
  { grep -E "error|commatlas:" "$OUT/build.log" | head -40; exit 1; }
echo "build: $((SECONDS - start)) s"
B=$PWD/build-dev-resize/engine
M=(mpirun --allow-run-as-root -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH -n 2)

start=$SECONDS
timeout 300 "${M[@]}" "$B/commatlas-mpiexec-tests" > "$OUT/tests.log" 2>&1
echo "tests: rc=$? in $((SECONDS - start)) s"
grep -E "FAILED|Failure|PASSED|SKIPPED \]" "$OUT/tests.log" | head -30

start=$SECONDS
COMMATLAS_TEST_SKIP_MOVE=1 timeout 300 "${M[@]}" -x COMMATLAS_TEST_SKIP_MOVE "$B/commatlas-mpiexec-tests" > "$OUT/planted.log" 2>&1
echo "planted: rc=$? in $((SECONDS - start)) s"
grep -E "FAILED|Failure|PASSED" "$OUT/planted.log" | head -30

start=$SECONDS
timeout 400 "${M[@]}" "$B/commatlas-engine" run --mpi --progress none --watchdog 60 --out "$OUT/engine.jsonl" \
  --only 'nccl.*,ipc.*,mpi.staged.*,mpi.gpu_aware.*' > "$OUT/engine.log" 2>&1
echo "engine: rc=$? in $((SECONDS - start)) s"
python3 - "$OUT/engine.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") == "result":
        c = r["cost"]
        print(f'{r["benchmark"]:28s} {" ".join(f"{k}={v}" for k, v in sorted(r.get("params", {}).items()) if k in ("allocator", "engine")):22s}'
              f' {r["bytes"]:>11d} B  prepare {c["prepare_s"] * 1e3:8.2f} ms  wall {c["wall_s"] * 1e3:8.2f} ms')
    elif r.get("type") in ("error", "skip"):
        print(r["type"], r["benchmark"], r.get("bytes"), r.get("message", r.get("reason", ""))[:100])
PY
