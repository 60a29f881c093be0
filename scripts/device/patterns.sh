#!/usr/bin/env bash
# The application patterns on a single-GPU machine, 2 and 4 ranks sharing the one GPU,
# built against the CUDA-aware Open MPI of /work/shared/gpu-mpi (carried in .device-carry/), so
# every mechanism that can run here does: MPI on host buffers, MPI staged through host memory,
# GPU-aware MPI, CUDA IPC between the processes; NCCL records its skip (one GPU per rank needed).
# Then one `--tune mpi` run (its BTLs one at a time) over the host, staged and GPU-aware patterns.
# Prints, last, the best mechanism per pattern and size and its speedup over host-staged MPI.
# Usage (repository root, .device-carry carried): OUT=/some/dir scripts/device/patterns.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the lent machines
mkdir -p "$OUT"
exec > >(tee "$OUT/patterns.log") 2>&1
CUDA_OMPI=/opt/ompi-cuda
start=$SECONDS
phase() { echo; echo "== $* (t=$((SECONDS - start)) s)"; }

phase "machine"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader

phase "CUDA-aware Open MPI, then the engine against it"
tar xzf .device-carry/openmpi-4.1.4-cuda-ubuntu24.tgz -C /opt || exit 1
export OPAL_PREFIX=$CUDA_OMPI PATH=$CUDA_OMPI/bin:$PATH LD_LIBRARY_PATH=$CUDA_OMPI/lib:${LD_LIBRARY_PATH:-}
ompi_info --parsable --all 2>/dev/null | grep mpi_built_with_cuda_support
timeout 170 bash -c "cmake -B build-dev-patterns -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_WITH_CUDA=ON -DCOMMATLAS_WITH_NCCL=ON \
  -DCOMMATLAS_WITH_MPI=ON -DCOMMATLAS_BUILD_TESTS=OFF -DMPI_C_COMPILER=$CUDA_OMPI/bin/mpicc > $OUT/build.log 2>&1 &&
  cmake --build build-dev-patterns -j16 --target commatlas-engine >> $OUT/build.log 2>&1"
echo "build rc=$?"; grep -E "error|commatlas: (MPI|NCCL)" "$OUT/build.log" | head -20
ENGINE=$PWD/build-dev-patterns/engine/commatlas-engine
ls -la "$ENGINE" || exit 1

launch() {  # ranks, limit, out, engine args...
  local ranks=$1 limit=$2 out=$3; shift 3
  echo "timeout $limit mpirun -n $ranks $ENGINE run --mpi $* --out $out"
  timeout "$limit" mpirun --allow-run-as-root --oversubscribe -n "$ranks" -x NCCL_NVLS_ENABLE -x OPAL_PREFIX \
    -x LD_LIBRARY_PATH -x PATH "$ENGINE" run --mpi "$@" --watchdog 40 --progress none --out "$out"
  echo "  -> rc=$?"
}

phase "every pattern, 4 ranks on the one GPU, default sizes"
launch 4 80 "$OUT/patterns-4ranks.jsonl" --only 'pattern.*' --time-budget 0.05
phase "every pattern, 2 ranks on the one GPU, quick sizes"
launch 2 45 "$OUT/patterns-2ranks.jsonl" --only 'pattern.*' --quick

phase "--tune mpi (the BTLs ompi_info reports, one at a time), 4 ranks"
export COMMATLAS_ENGINE=$ENGINE PYTHONPATH=python PYTHONUNBUFFERED=1
python3 -m commatlas list --tune
timeout 75 python3 -m commatlas run --tune mpi --only 'pattern.halo2d.mpi,pattern.halo2d.staged,pattern.halo2d.gpu_aware,pattern.bucketed_allreduce.gpu_aware' \
  --ranks 4 --sizes 512K,8M --quick --watchdog 30 --out "$OUT/tune-mpi" > "$OUT/tune-mpi.log" 2>&1
echo "  -> rc=$?"; tail -5 "$OUT/tune-mpi.log"
python3 - "$OUT/tune-mpi" <<'PY'
import json, sys
from commatlas.io.results import load_run
from commatlas.analysis.tuning import tuning_answers
answer = tuning_answers(load_run(sys.argv[1]))
json.dump(answer, open(sys.argv[1] + "/tuning.json", "w"), indent=1)
print("baseline:", answer["baseline"])
for kind in ("answers", "slowed", "broke"):
    for a in answer[kind]:
        print(f"  {kind}: {a['text']}")
PY
cp "$OUT/tune-mpi/results.jsonl" "$OUT/tune-mpi-results.jsonl" 2>/dev/null
cp "$OUT/tune-mpi/tuning.json" "$OUT/tune-mpi-tuning.json" 2>/dev/null

phase "records"
for f in "$OUT"/*.jsonl; do
  echo "$f: $(grep -c '"type":"result"' "$f") results, $(grep -c '"type":"skip"' "$f") skips, $(grep -c '"type":"error"' "$f") errors"
  grep '"type":"error"' "$f" | head -5 | cut -c1-400
  grep '"type":"skip"' "$f" | python3 -c "
import json, sys
for line in sys.stdin:
    r = json.loads(line); print('  skip', r['benchmark'], r['params'] or '', '->', r['reason'][:150])" | sort -u | head -12
done
tar czf "$OUT/logs.tgz" -C "$OUT" patterns.log build.log tune-mpi.log 2>/dev/null

phase "best mechanism per pattern (median step time, slowest rank) and speedup over host-staged MPI"
python3 - "$OUT"/patterns-*ranks.jsonl <<'PY'
import json, sys
from collections import defaultdict
for path in sys.argv[1:]:
    steps = defaultdict(dict)
    for line in open(path):
        r = json.loads(line)
        if r.get("type") != "result":
            continue
        pattern, mechanism = r["benchmark"].split(".")[1], r["benchmark"].split(".")[2]
        variant = f" compute_us={r['params']['compute_us']}" if "compute_us" in r["params"] else ""
        steps[(pattern + variant, r["bytes"], r["ranks"])][mechanism] = r["stats"]["median_s"] * 1e6
    print(path.split("/")[-1])
    for (pattern, size, ranks), by in sorted(steps.items()):
        best = min(by, key=by.get)
        staged = by.get("staged")
        vs = f"{staged / by[best]:.2f}x over staged" if staged else "no staged figure"
        vs_aware = f", {by['gpu_aware'] / by[best]:.2f}x over gpu_aware" if "gpu_aware" in by and best != "gpu_aware" else ""
        others = "  ".join(f"{m}={t:.1f}us" for m, t in sorted(by.items(), key=lambda kv: kv[1]))
        print(f"  {pattern:38s} {size / 2**20:8.3f} MiB {ranks} ranks: best {best} {by[best]:.1f} us ({vs}{vs_aware})  [{others}]")
PY
echo "total $((SECONDS - start)) s"
