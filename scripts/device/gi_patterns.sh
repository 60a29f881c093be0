#!/usr/bin/env bash
# The application patterns over the GPU-initiated mechanism (pattern.halo2d.gpu_initiated,
# .halo3d, .neighbor: a rank per GPU, every rank mapping the others' receive buffers by CUDA IPC; one
# kernel per exchange stores each message straight into the neighbour's buffer and flags it there,
# launched by the host, which waits for it), in one device call on nvidia-h100-x2 (about 6 min):
# build for sm_90 against the CUDA-aware Open MPI carried in .device-carry/, then
#   selfcheck  planted faults, each must fail every GPU-initiated pattern point, never hang:
#              COMMATLAS_TEST_SKIP_MOVE=1 (no step runs), COMMATLAS_PATTERN_FAULT=wrong_neighbour
#              and =missing_message (the patterns' own), all "data check failed";
#              COMMATLAS_TEST_GI_WRONG_FLAG=1 (every rank but 0 raises its flags one call short):
#              "waited more than 5 s", through the data check every rank takes part in
#   pingpong   gpu_initiated.ipc.pingpong at the faces' sizes, every launch mode: what one message
#              costs persistent and launched, beside the patterns' per-step launch
#   run        `commatlas run` over every mechanism of the three patterns (mpi, staged, gpu_aware,
#              ipc, nccl, gpu_initiated) at small sizes: records, report
#   table      median step time per pattern, size and mechanism, and GPU-initiated against the best
#              other mechanism
# The one-process form over peer access has no patterns: they are written for a process per rank
# (as NCCL's one-process transport has none); the peer-access ping-pong is gpu_initiated.sh's.
# Everything lands in $OUT as gi_patterns.tar.gz (records, logs, commands) plus the log itself.
# Usage (repository root, .device-carry carried):
#   OUT=/some/dir scripts/device/gi_patterns.sh
#   PHASES="build selfcheck" ... then PHASES="build pingpong run table" on the warm machine, to split
#   the work over two calls (the build folder build-gip stays there and rebuilds incrementally);
#   RANKS=4 on a node of 4 GPUs (one GPU per rank is required).
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
PHASES=${PHASES:-build selfcheck pingpong run table}
RANKS=${RANKS:-2}
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the lent machines
W=$(mktemp -d)/gi_patterns
mkdir -p "$W"
exec > >(tee "$OUT/gi_patterns.log") 2>&1
start=$SECONDS
phase() { echo; echo "== $* (t=$((SECONDS - start)) s, $(date -u +%FT%TZ))"; }
pack() { tar czf "$OUT/gi_patterns.tar.gz" -C "$(dirname "$W")" gi_patterns; }  # after every phase
trap pack EXIT
wants() { [[ " $PHASES " == *" $1 "* ]]; }
echo "phases: $PHASES; ranks: $RANKS" | tee "$W/commands.txt"

phase "machine"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv | tee "$W/nvidia-smi.csv"
nvidia-smi topo -m > "$W/topo-m.txt" 2>&1; head -4 "$W/topo-m.txt"

CUDA_OMPI=${CUDA_OMPI:-/opt/ompi-cuda}  # where the carried Open MPI unpacks
[ -x $CUDA_OMPI/bin/mpirun ] || tar xzf .device-carry/openmpi-4.1.4-cuda-ubuntu24.tgz -C /opt || exit 1
export OPAL_PREFIX=$CUDA_OMPI PATH=$CUDA_OMPI/bin:$PATH LD_LIBRARY_PATH=$CUDA_OMPI/lib:${LD_LIBRARY_PATH:-}
if wants build; then
  phase "the engine against the CUDA-aware Open MPI, sm_90"
  { cmake -B build-gip -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_WITH_CUDA=ON -DCOMMATLAS_WITH_NCCL=ON \
      -DCOMMATLAS_WITH_MPI=ON -DCOMMATLAS_BUILD_TESTS=OFF -DMPI_C_COMPILER=$CUDA_OMPI/bin/mpicc &&
    cmake --build build-gip -j"$(nproc)"; } > "$W/build.log" 2>&1 || { tail -40 "$W/build.log"; exit 1; }
  echo "build: $((SECONDS - start)) s"
fi
export COMMATLAS_ENGINE=$PWD/build-gip/engine/commatlas-engine PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
[ -x "$COMMATLAS_ENGINE" ] || { echo "no engine at $COMMATLAS_ENGINE: run the build phase"; exit 1; }
$COMMATLAS_ENGINE info > "$W/engine-info.json"
$COMMATLAS_ENGINE list 2>&1 | grep -E '^pattern\.(halo|neighbor)|gpu_initiated' | cut -c1-160 | tee "$W/list.txt"

PATTERNS='pattern.halo2d.gpu_initiated,pattern.halo3d.gpu_initiated,pattern.neighbor.gpu_initiated'
mpi() {  # mpi LOG ENV... -- ENGINE ARGS: the engine on $RANKS ranks, one GPU each
  local log=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=(-x "$1"); shift; done
  shift
  echo "mpirun -n $RANKS ${envs[*]} commatlas-engine $*" >> "$W/commands.txt"
  timeout 150 mpirun --allow-run-as-root -n "$RANKS" -x NCCL_NVLS_ENABLE -x OPAL_PREFIX -x LD_LIBRARY_PATH -x PATH \
    "${envs[@]}" "$COMMATLAS_ENGINE" "$@" > "$log" 2>&1
  echo "  rc=$? ($(basename "$log"))"
}

if wants selfcheck; then
  mkdir -p "$W/selfcheck"
  # Each planted point of the one-short flags waits out one 5 s spin on every rank, then every later
  # wait stops at once (the abort words); the quick sizes are one per pattern.
  for fault in skipmove:COMMATLAS_TEST_SKIP_MOVE=1 wrongneighbour:COMMATLAS_PATTERN_FAULT=wrong_neighbour \
               missingmessage:COMMATLAS_PATTERN_FAULT=missing_message wrongflag:COMMATLAS_TEST_GI_WRONG_FLAG=1; do
    name=${fault%%:*} var=${fault#*:}
    phase "self-check $name ($var)"
    mpi "$W/selfcheck/$name.log" "$var" -- run --mpi --only "$PATTERNS" --quick --time-budget 0.01 --watchdog 40 \
      --progress none --out "$W/selfcheck/$name.jsonl"
  done
  python3 - "$W/selfcheck" <<'EOF' | tee "$W/selfcheck/verdict.txt"
import json, sys
from collections import Counter
from pathlib import Path
d = Path(sys.argv[1])
expect = {"skipmove": "data check failed", "wrongneighbour": "data check failed",
          "missingmessage": "data check failed", "wrongflag": "waited more than"}
failed = False
for name, words in expect.items():
    f = d / f"{name}.jsonl"
    recs = [json.loads(l) for l in f.read_text().splitlines() if l.strip()] if f.exists() else []
    points = [r for r in recs if r.get("type") in ("result", "error", "skip")]
    wrong = [r for r in points if r["type"] != "error" or words not in r.get("message", "")]
    print(f"{name}: {dict(Counter(r['type'] for r in points))}; not failing as planted: {len(wrong)}")
    for r in points:
        print(f"    {r['benchmark']:32} {r.get('bytes')!s:>9} {r['type']:6} {(r.get('message') or r.get('reason') or '')[:150]}")
    failed |= bool(wrong) or len(points) < 3
print("SELF-CHECK", "FAILED" if failed else "PASSED: every planted fault failed every GPU-initiated pattern point")
EOF
  pack
fi

if wants pingpong; then
  # The faces of the run's sizes (halo2d 32K/512K/2M: 512 B, 2 KiB, 4 KiB; halo3d: 2 KiB, 12.5 KiB,
  # 32 KiB) one at a time: a persistent round trip is the link, launch_included one launch and wait.
  phase "gpu_initiated.ipc.pingpong at the faces' sizes, every launch mode"
  mkdir -p "$W/pingpong"
  mpi "$W/pingpong/pingpong.log" -- run --mpi --only gpu_initiated.ipc.pingpong --sizes 512,2K,4K,12800,32K \
    --time-budget 0.1 --watchdog 40 --progress none --out "$W/pingpong/pingpong.jsonl"
  python3 - "$W/pingpong/pingpong.jsonl" <<'EOF' | tee "$W/pingpong/table.txt"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
modes = ["persistent", "back_to_back", "graph", "launch_included"]
rows = {}
for r in recs:
    if r.get("benchmark") != "gpu_initiated.ipc.pingpong":
        continue
    if r.get("type") == "error":
        print("error", r.get("params", {}).get("launch_mode"), r.get("bytes"), r.get("message", "")[:150])
    if r.get("type") == "result":
        ok = "" if (r.get("verified") or {}).get("ok") else "!"
        rows.setdefault(r["bytes"], {})[r["params"]["launch_mode"]] = f"{r['stats']['median_s'] * 1e6:.2f}{ok}"
print("one-way rank 0 -> rank 1 (CUDA IPC), half a ping-pong, median (us); '!' not verified")
print(f"{'bytes':>7}" + "".join(f"{m:>17}" for m in modes))
for b in sorted(rows):
    print(f"{b:>7}" + "".join(f"{rows[b].get(m, '-'):>17}" for m in modes))
EOF
  pack
fi

if wants run; then
  phase "commatlas run: halo2d, halo3d and neighbor over every mechanism, $RANKS ranks"
  ONLY='pattern.halo2d.*,pattern.halo3d.*,pattern.neighbor.*'
  SIZES=32K,512K,2M  # halo2d faces 512 B-4 KiB, halo3d 2-32 KiB; neighbour means 32 KiB-2 MiB
  echo "commatlas run --out run --only '$ONLY' --sizes $SIZES --ranks $RANKS --time-budget 0.05 --watchdog 60" \
    >> "$W/commands.txt"
  timeout -s INT 300 python3 -m commatlas run --out "$W/run" --only "$ONLY" --sizes "$SIZES" --ranks "$RANKS" \
    --time-budget 0.05 --watchdog 60 > "$W/run.log" 2>&1
  echo "run: rc=$?"; head -70 "$W/run.log"
  pack
fi

if wants table; then
  phase "median step time (slowest rank) per pattern, size and mechanism"
  python3 - "$W/run/results.jsonl" <<'EOF' | tee "$W/table.txt"
import json, sys
from collections import defaultdict
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rows = defaultdict(dict)  # (pattern, bytes) -> mechanism -> seconds
memory = {}  # mechanism -> where its buffers are (the record's movement says: host or gpu)
for r in recs:
    if not r.get("benchmark", "").startswith("pattern."):
        continue
    _, pattern, mech = r["benchmark"].split(".", 2)
    if r.get("type") == "error":
        print("error", r["benchmark"], r.get("bytes"), r.get("message", "")[:160])
        rows[(pattern, r["bytes"])][mech] = None
    elif r.get("type") == "skip" and mech == "gpu_initiated":
        print("skip", r["benchmark"], r.get("reason", "")[:160])
    elif r.get("type") == "result":
        rows[(pattern, r["bytes"])][mech] = r["stats"]["median_s"] if (r.get("verified") or {}).get("ok") else None
        memory[mech] = r["movement"]["from"]["memory"]
mechs = ["mpi", "staged", "gpu_aware", "ipc", "nccl", "gpu_initiated"]
print(f"{'pattern':9}{'size':>9}" + "".join(f"{m:>14}" for m in mechs) + "   gpu_initiated / best other on GPU buffers")
for (pattern, size), by in sorted(rows.items()):
    cells = "".join(f"{'':>14}" if m not in by else f"{'FAILED':>14}" if by[m] is None else f"{by[m] * 1e6:>12.1f}us"
                    for m in mechs)
    # Rivals move the same buffers: GPU memory (host-buffer MPI answers another question).
    others = {m: v for m, v in by.items() if m != "gpu_initiated" and v and memory.get(m) == "gpu"}
    gi = by.get("gpu_initiated")
    best = min(others, key=others.get) if others else None
    verdict = f"{gi / others[best]:.2f} ({best})" if gi and best else "-"
    print(f"{pattern:9}{size:>9}{cells}   {verdict}")
print("(step time, so below 1 the GPU-initiated step is the faster; FAILED: an error or an unverified point;")
print(" " + ", ".join(f"{m}: {where} buffers" for m, where in sorted(memory.items())) + ")")
inc = next((r.get("latency_includes") for r in recs if r.get("type") == "result"
            and r["benchmark"].endswith(".gpu_initiated")), None)
print("\nwhat a GPU-initiated step includes (the record's latency_includes):\n ", inc or "no GPU-initiated result")
EOF
  pack
fi
echo "total $((SECONDS - start)) s"
ls -la "$OUT"
exit 0
