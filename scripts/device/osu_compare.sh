#!/usr/bin/env bash
# Does the engine's MPI cost more than OSU's? Its host-buffer MPI figures (mpi.pingpong,
# mpi.bandwidth, mpi.bibw) against the OSU-method reference (commatlas-osu-ref,
# osu_latency/osu_bw/osu_bibw with OSU 7.x counts, in a process of its own), 2 ranks bound to cores,
# ROUNDS interleaved rounds (order flips each round), at 1 B, 64 B, 4 KiB, 64 KiB, 1 MiB. Only host
# MPI matters: CUDA=OFF (default) builds without CUDA; CUDA=ON builds the full engine (CUDA/NCCL
# linked in) to see whether that costs anything.
#   OUT=dir bash scripts/device/osu_compare.sh          (ROUNDS=7 SIZES=1,64,4K,64K,1M CUDA=OFF)
# Writes $OUT/rounds.jsonl (every record of every round), $OUT/summary.md (the table), logs, and
# $OUT/osu_compare.tar.gz of all of it; prints the table last. About 3 minutes on 16 cores (two engine runs and one reference per round).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT to the output folder}
ROUNDS=${ROUNDS:-7}
SIZES=${SIZES:-1,64,4096,65536,1048576}
CUDA=${CUDA:-OFF}
BUILD=${BUILD:-build-osu-$CUDA}  # BUILD=build-o NOBUILD=1: use a build already there
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[[ -n "${NOBUILD:-}" ]] || { cmake -B "$BUILD" -DCOMMATLAS_WITH_CUDA="$CUDA" -DCOMMATLAS_BUILD_TESTS=OFF -DCMAKE_CUDA_ARCHITECTURES=90 &&
  cmake --build "$BUILD" -j16 --target commatlas-engine commatlas-osu-ref; } > "$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log"; exit 1; }
ENGINE=$BUILD/engine/commatlas-engine
REF=$BUILD/engine/commatlas-osu-ref
LAUNCH=(mpiexec -n 2 --bind-to core)
{ mpiexec --version; nproc; lscpu | grep -E "Model name|NUMA node"; "$ENGINE" info --json; } > "$OUT/machine.txt" 2>&1

engine_round() {  # $1 = round, $2 = MPI thread level: the engine's records, stamped with the round
  local file="$OUT/engine-$2-$1.jsonl"
  timeout 100 env COMMATLAS_MPI_THREAD_LEVEL="$2" "${LAUNCH[@]}" "$ENGINE" run --mpi --out "$file" --only mpi.pingpong,mpi.bandwidth,mpi.bibw \
    --sizes "$SIZES" --progress none --repeat-index "$1" >> "$OUT/engine.log" 2>&1 || echo "engine round $1: exit $?"
}
reference_round() {  # $1 = round: the reference's JSON lines, turned into records by commatlas.analysis.osu
  timeout 60 "${LAUNCH[@]}" "$REF" --sizes "$SIZES" > "$OUT/reference-$1.txt" 2>> "$OUT/reference.log" ||
    echo "reference round $1: exit $?"
}
start=$(date +%s)
for round in $(seq 1 "$ROUNDS"); do
  # "single" is the engine now; "funneled" the thread level it asked for before (the cost measured).
  if (( round % 2 )); then engine_round "$round" single; reference_round "$round"; engine_round "$round" funneled
  else engine_round "$round" funneled; reference_round "$round"; engine_round "$round" single; fi
  echo "round $round done at $(( $(date +%s) - start )) s"
done

PYTHONPATH=python python3 - "$OUT" "$ROUNDS" "$ENGINE" <<'EOF'
import json, sys
from pathlib import Path
from commatlas.analysis import osu
from commatlas.io.engine import Engine
out, rounds, engine = Path(sys.argv[1]), int(sys.argv[2]), Engine(Path(sys.argv[3]).resolve())
def load(level):
    records = []
    for k in range(1, rounds + 1):
        engine = out / f"engine-{level}-{k}.jsonl"
        if engine.exists():
            records += [json.loads(line) for line in engine.read_text().splitlines() if line.strip()]
    return records
reference = []
for k in range(1, rounds + 1):
    ref = out / f"reference-{k}.txt"
    if ref.exists():
        reference += osu.reference_records(engine, ref.read_text().splitlines(), 2, repeat=k)
after, before = load("single"), load("funneled")
for r in reference:  # the engine's movement, as the run would give it (commatlas.analysis.osu)
    r["movement"] = osu.reference_movement(r["benchmark"].replace("reference.", ""), osu.engine_movements(after).get(r["params"]["reference_of"]))
with open(out / "rounds.jsonl", "w") as f:
    for r in after + reference:
        f.write(json.dumps(r) + "\n")
with open(out / "rounds-funneled.jsonl", "w") as f:
    for r in before:
        f.write(json.dumps(r) + "\n")
rows = osu.comparison_rows(after + reference)
old = {(r.benchmark, r.bytes): r for r in osu.comparison_rows(before + reference)}
lines = [f"# engine vs OSU-method reference, {rounds} interleaved rounds (medians; spread = reference max-min / median)",
         "# before = the engine at MPI_THREAD_FUNNELED (its old level), after = MPI_THREAD_SINGLE (now)", "",
         "| benchmark | size | unit | before | after | OSU method | before/OSU | after/OSU | OSU spread | rounds | agree |",
         "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
for r in rows:
    b = old.get((r.benchmark, r.bytes))
    unit = "us" if r.metric == "latency" else "MB/s"
    lines.append(f"| {r.benchmark} | {r.bytes} | {unit} | {b.engine if b else float('nan'):.4g} | {r.engine:.4g} | "
                 f"{r.reference:.4g} | {b.ratio if b else float('nan'):.3f} | {r.ratio:.3f} | "
                 f"{r.reference_spread:.1%} | {r.rounds} | {'yes' if r.agree else 'NO'} |")
(out / "summary.md").write_text("\n".join(lines) + "\n")
EOF
tar -czf "$OUT/osu_compare.tar.gz" -C "$OUT" --exclude osu_compare.tar.gz . 2>/dev/null
cat "$OUT/summary.md"
