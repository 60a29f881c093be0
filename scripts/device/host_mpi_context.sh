#!/usr/bin/env bash
# Why does host-buffer MPI read slower in the engine than in the OSU-method reference on the GPU
# machines, when the two agree on the 2-core CPU machine? The guess tested here: the engine's rank
# holds a CUDA context (its GPU benchmarks made one) and the reference's does not, and a CUDA-aware
# MPI asks the driver about every buffer it is handed.
#
# Five conditions, ROUNDS interleaved rounds (the order rotates each round), 2 ranks bound to cores
# as the run's launcher binds them, host buffers, SIZES:
#   ref        commatlas-osu-ref (osu_latency / osu_bw / osu_bibw loops), as the run starts it
#   ref+ctx    the same, with a CUDA context made on the rank's GPU right after MPI_Init
#              (LD_PRELOAD of a wrapper of MPI_Init / MPI_Init_thread, built here: ctx_after_init.c)
#   eng        the engine, --only mpi.pingpong,mpi.bandwidth,mpi.bibw
#   eng+ctx    the same with the wrapper
#   eng+gpu    the engine with ipc.pingpong ahead of them in the job, as in the default run's order
# Then NCCL's first collective calls in a rank-per-GPU job (nccl.allgather, nccl.alltoall: their
# prepare_s holds NCCL's connection setup) with the ranks bound to one core each and unbound.
#
#   OUT=dir BUILD=build-nv bash scripts/device/host_mpi_context.sh   (ROUNDS=5 SIZES=1,64,4096)
# BUILD is a CUDA + MPI build of the engine (nvshmem.sh leaves build-nv); its commatlas-osu-ref is
# built here. Writes $OUT/host_mpi_context.tar.gz (records, logs, summary.md) and prints the table.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT to the output folder}
ROUNDS=${ROUNDS:-5}
SIZES=${SIZES:-1,64,4096}
BUILD=${BUILD:-build-nv}
W=$(mktemp -d)/host_mpi_context
mkdir -p "$W"
trap 'tar czf "$OUT/host_mpi_context.tar.gz" -C "$(dirname "$W")" host_mpi_context' EXIT
cmake --build "$BUILD" -j"$(nproc)" --target commatlas-osu-ref > "$W/build.log" 2>&1 || { tail -30 "$W/build.log"; exit 1; }
ENGINE=$BUILD/engine/commatlas-engine
REF=$BUILD/engine/commatlas-osu-ref
CUDA=${CUDA_HOME:-/usr/local/cuda}

# The wrapper: MPI_Init as asked, then the rank's CUDA context, as the engine's first GPU benchmark
# makes one after MPI_Init.
cat > "$W/ctx_after_init.c" <<'EOF'
#include <cuda_runtime.h>
#include <mpi.h>
#include <stdlib.h>
static void make_context(void) {
  const char *local = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) return;
  cudaSetDevice((local ? atoi(local) : 0) % n);
  cudaFree(0);
}
int MPI_Init(int *argc, char ***argv) { int rc = PMPI_Init(argc, argv); make_context(); return rc; }
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided); make_context(); return rc;
}
EOF
mpicc -shared -fPIC -O2 -I"$CUDA/include" -o "$W/ctx_after_init.so" "$W/ctx_after_init.c" -L"$CUDA/lib64" -lcudart \
  > "$W/wrapper-build.log" 2>&1 || { cat "$W/wrapper-build.log"; exit 1; }
CTX=(-x LD_PRELOAD="$W/ctx_after_init.so")

LAUNCH=(mpirun -n 2 --bind-to core -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH -x PATH)
[ -n "${OPAL_PREFIX:-}" ] && LAUNCH+=(-x OPAL_PREFIX)
{ mpirun --version | head -1; nproc; "$ENGINE" info --json; } > "$W/machine.txt" 2>&1
echo "ROUNDS=$ROUNDS SIZES=$SIZES, launcher: ${LAUNCH[*]}" | tee "$W/commands.txt"

run_condition() {  # $1 = condition, $2 = round
  case $1 in
    ref)     timeout 60 "${LAUNCH[@]}" "$REF" --sizes "$SIZES" > "$W/ref-$2.txt" 2>> "$W/ref.log" ;;
    ref+ctx) timeout 60 "${LAUNCH[@]}" "${CTX[@]}" "$REF" --sizes "$SIZES" > "$W/refctx-$2.txt" 2>> "$W/ref.log" ;;
    eng)     timeout 100 "${LAUNCH[@]}" "$ENGINE" run --mpi --only mpi.pingpong,mpi.bandwidth,mpi.bibw --sizes "$SIZES" \
               --progress none --repeat-index "$2" --out "$W/eng-$2.jsonl" >> "$W/eng.log" 2>&1 ;;
    eng+ctx) timeout 100 "${LAUNCH[@]}" "${CTX[@]}" "$ENGINE" run --mpi --only mpi.pingpong,mpi.bandwidth,mpi.bibw \
               --sizes "$SIZES" --progress none --repeat-index "$2" --out "$W/engctx-$2.jsonl" >> "$W/eng.log" 2>&1 ;;
    eng+gpu) timeout 100 "${LAUNCH[@]}" "$ENGINE" run --mpi --only ipc.pingpong,mpi.pingpong,mpi.bandwidth,mpi.bibw \
               --sizes "$SIZES" --progress none --repeat-index "$2" --out "$W/enggpu-$2.jsonl" >> "$W/eng.log" 2>&1 ;;
  esac || echo "$1 round $2: exit $?"
}
CONDITIONS=(ref ref+ctx eng eng+ctx eng+gpu)
start=$SECONDS
for round in $(seq 1 "$ROUNDS"); do
  for k in "${!CONDITIONS[@]}"; do run_condition "${CONDITIONS[$(( (k + round) % ${#CONDITIONS[@]} ))]}" "$round"; done
  echo "round $round done at $((SECONDS - start)) s"
done

echo "== NCCL's first calls, ranks bound to a core each and unbound (t=$((SECONDS - start)) s)"
for round in 1 2; do
  for bind in core none; do
    timeout 120 mpirun -n 2 --bind-to "$bind" -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH -x PATH ${OPAL_PREFIX:+-x OPAL_PREFIX} \
      "$ENGINE" run --mpi --only nccl.allgather,nccl.alltoall,nccl.pingpong --sizes 8,1M,256M --progress none \
      --out "$W/nccl-$bind-$round.jsonl" >> "$W/nccl.log" 2>&1 || echo "nccl bind=$bind round $round: exit $?"
  done
done
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P timeout 120 mpirun -n 2 --bind-to core -x NCCL_NVLS_ENABLE -x NCCL_DEBUG \
  -x NCCL_DEBUG_SUBSYS -x LD_LIBRARY_PATH -x PATH ${OPAL_PREFIX:+-x OPAL_PREFIX} \
  "$ENGINE" run --mpi --only nccl.allgather,nccl.alltoall --sizes 256M --progress none \
  --out "$W/nccl-debug.jsonl" > "$W/nccl-debug.log" 2>&1 || echo "nccl debug run: exit $?"
echo "done at $((SECONDS - start)) s"

PYTHONPATH=python python3 - "$W" "$ROUNDS" "$ENGINE" <<'EOF' | tee "$W/summary.md"
import json, statistics, sys
from collections import defaultdict
from pathlib import Path
from commatlas.analysis import osu
from commatlas.io.engine import Engine
w, rounds, engine = Path(sys.argv[1]), int(sys.argv[2]), Engine(Path(sys.argv[3]).resolve())
def jsonl(path):
    return [json.loads(l) for l in path.read_text().splitlines() if l.strip()] if path.exists() else []
values = defaultdict(list)  # (condition, test, bytes) -> per-round figure (MB/s for bw and bibw, us for latency)
TEST = {"mpi.pingpong": "latency", "mpi.bandwidth": "bw", "mpi.bibw": "bibw",
        "reference.osu_latency": "latency", "reference.osu_bw": "bw", "reference.osu_bibw": "bibw"}
def add(condition, records):
    for r in records:
        test = TEST.get(r.get("benchmark"))
        if r.get("type") != "result" or not test:
            continue
        figure = r["latency_us"] if test == "latency" else r["bandwidth_gbps"] * 1e3
        values[(condition, test, r["bytes"])].append(figure)
for k in range(1, rounds + 1):
    for condition, name in (("eng", "eng"), ("eng+ctx", "engctx"), ("eng+gpu", "enggpu")):
        add(condition, jsonl(w / f"{name}-{k}.jsonl"))
    for condition, name in (("ref", "ref"), ("ref+ctx", "refctx")):
        text = w / f"{name}-{k}.txt"
        if text.exists():
            add(condition, osu.reference_records(engine, text.read_text().splitlines(), 2, repeat=k))
conditions = ["ref", "ref+ctx", "eng", "eng+ctx", "eng+gpu"]
print(f"# host-buffer MPI, medians of {rounds} interleaved rounds (bw, bibw: MB/s; latency: us); x = against ref")
print("| test | bytes | " + " | ".join(conditions) + " | ref+ctx x | eng x | eng+ctx x | eng+gpu x |")
print("| --- | ---: |" + " ---: |" * (len(conditions) + 4))
for test in ("latency", "bw", "bibw"):
    for size in sorted({b for (_, t, b) in values if t == test}):
        med = {c: statistics.median(values[(c, test, size)]) if values[(c, test, size)] else float("nan") for c in conditions}
        ratio = lambda c: med[c] / med["ref"] if med["ref"] == med["ref"] and med["ref"] else float("nan")
        print(f"| {test} | {size} | " + " | ".join(f"{med[c]:.4g}" for c in conditions) + " | " +
              " | ".join(f"{ratio(c):.2f}" for c in ("ref+ctx", "eng", "eng+ctx", "eng+gpu")) + " |")
print()
print("# NCCL, rank per GPU: prepare_s of each benchmark's first point (NCCL connects on first use)")
print("| bind | round | " + " | ".join(("nccl.allgather", "nccl.alltoall", "nccl.pingpong")) + " |")
print("| --- | ---: | ---: | ---: | ---: |")
for bind in ("core", "none"):
    for k in (1, 2):
        first = {}
        for r in jsonl(w / f"nccl-{bind}-{k}.jsonl"):
            if r.get("type") == "result":
                first.setdefault(r["benchmark"], r["cost"]["prepare_s"])
        print(f"| {bind} | {k} | " + " | ".join(f"{first.get(b, float('nan')):.3f}" for b in ("nccl.allgather", "nccl.alltoall", "nccl.pingpong")) + " |")
EOF
