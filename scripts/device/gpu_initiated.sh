#!/usr/bin/env bash
# The GPU-initiated mechanism and the launch modes, in one device call on nvidia-h100-x2 (<= 8 min):
# build for sm_90 against the CUDA-aware Open MPI carried in .device-carry/, then
#   selfcheck  the planted faults, each must fail loudly and never hang:
#              COMMATLAS_TEST_SKIP_MOVE=1 (flags raised, no payload stored): every point "data check failed";
#              COMMATLAS_TEST_GI_WRONG_FLAG=1 (the answering GPU raises every flag one short): every point an
#              error saying a GPU waited more than 5 s for its peer's flag
#   protocols  one-way 8 B GPU 0 -> GPU 1 per ping-pong protocol (LL, payload-then-flag with acquire polls,
#              with relaxed polls and one fence), every launch mode, both mappings, and 64 KiB for the poll
#   run        `commatlas run` over the new mechanism (gpu_initiated.*: one process over peer access, one
#              rank per GPU over CUDA IPC), the launch modes (gpu.copy_launch, nccl.*pingpong_launch) and
#              the latency contenders of the GPU 0 -> GPU 1 row (gpu.copy_latency, ipc.pingpong,
#              nccl.pingpong, nccl.single.pingpong, mpi.gpu_aware.pingpong): records, answers, report
#   table      the small-size figures per mechanism and launch mode, and the goal (one-way 8 B GPU 0 ->
#              GPU 1, half a persistent ping-pong, <= 2 us)
# Everything lands in $OUT as gpu_initiated.tar.gz (records, logs, commands) plus the log itself.
# Usage (repository root, .device-carry carried): OUT=/some/dir scripts/device/gpu_initiated.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the lent machines
W=$(mktemp -d)/gpu_initiated
mkdir -p "$W"
exec > >(tee "$OUT/gpu_initiated.log") 2>&1
start=$SECONDS
phase() { echo; echo "== $* (t=$((SECONDS - start)) s, $(date -u +%FT%TZ))"; }
pack() { tar czf "$OUT/gpu_initiated.tar.gz" -C "$(dirname "$W")" gpu_initiated; }  # after every phase
trap pack EXIT

phase "machine"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv | tee "$W/nvidia-smi.csv"
nvidia-smi topo -m > "$W/topo-m.txt" 2>&1; head -4 "$W/topo-m.txt"

phase "CUDA-aware Open MPI, then the engine against it"
source scripts/device/build_engine.sh build-gi "$W/build.log" || exit 1
$COMMATLAS_ENGINE info > "$W/engine-info.json"
$COMMATLAS_ENGINE list 2>&1 | grep -E 'gpu_initiated|copy_launch|pingpong_launch' | tee "$W/list.txt"

SINGLE='gpu_initiated.pingpong,gpu_initiated.bandwidth,gpu.copy_launch,nccl.single.pingpong_launch'
RANKS='gpu_initiated.ipc.pingpong,gpu_initiated.ipc.bandwidth,nccl.pingpong_launch'
MPIRUN=(mpirun --allow-run-as-root -n 2 -x NCCL_NVLS_ENABLE -x COMMATLAS_TEST_SKIP_MOVE -x COMMATLAS_TEST_GI_WRONG_FLAG
        -x COMMATLAS_GI_LL_MAX -x COMMATLAS_GI_POLL -x OPAL_PREFIX -x LD_LIBRARY_PATH -x PATH)

selfcheck() {  # selfcheck NAME VAR SIZES SINGLE RANKS: both parts with VAR=1
  local name=$1 var=$2 sizes=$3 single=$4 ranks=$5
  phase "self-check $name ($var=1)"
  mkdir -p "$W/selfcheck"
  env "$var=1" timeout 100 "$COMMATLAS_ENGINE" run --only "$single" --sizes "$sizes" --time-budget 0.01 --watchdog 30 \
    --progress none --out "$W/selfcheck/$name-single.jsonl" > "$W/selfcheck/$name-single.log" 2>&1
  echo "$name single: rc=$?"
  env "$var=1" timeout 100 "${MPIRUN[@]}" "$COMMATLAS_ENGINE" run --mpi --only "$ranks" --sizes "$sizes" \
    --time-budget 0.01 --watchdog 30 --progress none --out "$W/selfcheck/$name-mpi.jsonl" > "$W/selfcheck/$name-mpi.log" 2>&1
  echo "$name mpi: rc=$?"
}

judge() {  # every point of the planted runs must be an error of the expected kind
  python3 - "$W/selfcheck" <<'EOF'
import json, sys
from collections import Counter
from pathlib import Path
d = Path(sys.argv[1])
expect = {"skipmove": "data check failed", "wrongflag": "waited more than"}
failed = False
for name, words in expect.items():
    for part in ("single", "mpi"):
        f = d / f"{name}-{part}.jsonl"
        recs = [json.loads(l) for l in f.read_text().splitlines() if l.strip()] if f.exists() else []
        points = [r for r in recs if r.get("type") in ("result", "error")]
        # The flag-only benchmarks of the planted no-op: NCCL and copies skip their call entirely.
        wrong = [r for r in points if r["type"] == "result" or words not in r.get("message", "")]
        if name == "wrongflag":  # only the GPU-initiated path has flags to plant
            wrong = [r for r in wrong if r["benchmark"].startswith("gpu_initiated")]
        print(f"{name}-{part}: {dict(Counter(r['type'] for r in points))}; not failing as planted: {len(wrong)}")
        for r in wrong[:6]:
            print("   ", r["benchmark"], r.get("params", {}).get("launch_mode"), r["bytes"], r["type"],
                  (r.get("message") or "")[:140])
        failed |= bool(wrong) or not points
print("SELF-CHECK", "FAILED" if failed else "PASSED: every planted fault failed its point")
EOF
}

selfcheck skipmove COMMATLAS_TEST_SKIP_MOVE 1M,64K,8 "$SINGLE" "$RANKS"
# Each planted point waits out one 5 s spin: the GPU-initiated benchmarks only, at 8 B (the
# ping-pong's LL protocol) and 64 KiB (payload, then a flag).
selfcheck wrongflag COMMATLAS_TEST_GI_WRONG_FLAG 8,64K 'gpu_initiated.pingpong,gpu_initiated.bandwidth' \
  'gpu_initiated.ipc.pingpong,gpu_initiated.ipc.bandwidth'
judge | tee "$W/selfcheck/verdict.txt"
pack

# One-way 8 B GPU 0 -> GPU 1 per protocol of the ping-pong: LL (flag in every word, the default
# up to 4 KiB), payload-then-flag polled with acquire loads (COMMATLAS_GI_LL_MAX=0), and the same
# polled relaxed with one acquire fence (COMMATLAS_GI_POLL=relaxed); 64 KiB (payload-then-flag in
# every configuration) shows the poll alone. Every launch mode, both mappings.
phase "one-way 8 B per protocol"
mkdir -p "$W/protocols"
for cfg in ll flag-acquire flag-relaxed; do
  case $cfg in
    ll) envs=(COMMATLAS_GI_LL_MAX=4096) ;;  # the default threshold, said explicitly
    flag-acquire) envs=(COMMATLAS_GI_LL_MAX=0) ;;
    flag-relaxed) envs=(COMMATLAS_GI_LL_MAX=0 COMMATLAS_GI_POLL=relaxed) ;;
  esac
  echo "$cfg: ${envs[*]} commatlas-engine run --only gpu_initiated[.ipc].pingpong --sizes 8,64K --time-budget 0.3" \
    >> "$W/commands.txt"
  env "${envs[@]}" timeout 60 "$COMMATLAS_ENGINE" run --only gpu_initiated.pingpong --sizes 8,64K --time-budget 0.3 \
    --watchdog 30 --progress none --out "$W/protocols/$cfg-single.jsonl" > "$W/protocols/$cfg-single.log" 2>&1
  echo "$cfg single: rc=$?"
  env "${envs[@]}" timeout 60 "${MPIRUN[@]}" "$COMMATLAS_ENGINE" run --mpi --only gpu_initiated.ipc.pingpong \
    --sizes 8,64K --time-budget 0.3 --watchdog 30 --progress none --out "$W/protocols/$cfg-mpi.jsonl" \
    > "$W/protocols/$cfg-mpi.log" 2>&1
  echo "$cfg mpi: rc=$?"
done
python3 - "$W/protocols" <<'EOF' | tee "$W/protocols/table.txt"
import json, sys
from pathlib import Path
d = Path(sys.argv[1])
modes = ["persistent", "back_to_back", "graph", "launch_included"]
short = {"persistent": "persist", "back_to_back": "b2b", "graph": "graph", "launch_included": "launch"}
print("one-way GPU 0 -> GPU 1, half a ping-pong, median per op (us)")
print(f"{'config':13}{'map':5}{'bytes':>6}" + "".join(f"{short[m]:>9}" for m in modes) + "  record")
for cfg in ("ll", "flag-acquire", "flag-relaxed"):
    for part, mapping in (("single", "peer"), ("mpi", "ipc")):
        f = d / f"{cfg}-{part}.jsonl"
        recs = [json.loads(l) for l in f.read_text().splitlines() if l.strip()] if f.exists() else []
        for size in (8, 65536):
            cells, says = {}, set()
            for r in recs:
                if (r.get("bytes") != size or r.get("type") not in ("result", "error")
                        or not r.get("benchmark", "").endswith("pingpong")
                        or not r.get("benchmark", "").startswith("gpu_initiated")):
                    continue
                m = r.get("params", {}).get("launch_mode")
                if r["type"] == "error":
                    cells[m] = "error"
                    continue
                ok = (r.get("verified") or {}).get("ok", False)
                cells[m] = f"{r['stats']['median_s'] * 1e6:.2f}" + ("" if ok else "!")
                inc = r.get("latency_includes", "")
                says.add("LL" if "protocol LL" in inc else "flag" if "payload-then-flag" in inc else "?")
                if "relaxed polls" in inc:
                    says.add("relaxed")
            print(f"{cfg:13}{mapping:5}{size:>6}" + "".join(f"{cells.get(m, '-'):>9}" for m in modes) +
                  "  " + ",".join(sorted(says)))
print("('!': not verified; 'record': the protocol the record's latency_includes names)")
for part in ("single", "mpi"):
    recs = [json.loads(l) for l in (d / f"ll-{part}.jsonl").read_text().splitlines() if l.strip()] \
        if (d / f"ll-{part}.jsonl").exists() else []
    v = [r["stats"]["median_s"] for r in recs if r.get("type") == "result" and r["bytes"] == 8
         and r["benchmark"] in ("gpu_initiated.pingpong", "gpu_initiated.ipc.pingpong")
         and r.get("params", {}).get("launch_mode") == "persistent"]
    print(f"GOAL one-way 8 B, persistent, LL, {'peer access' if part == 'single' else 'CUDA IPC'}:",
          f"{v[0] * 1e6:.2f} us" if v else "not measured", "(goal <= 2 us)")
EOF
grep -h -i -m3 "error" "$W"/protocols/*.log | head -6
pack

phase "commatlas run: the mechanism, the launch modes and the GPU 0 -> GPU 1 latency contenders"
ONLY="$SINGLE,$RANKS,gpu.copy_latency,ipc.pingpong,ipc.bandwidth,nccl.pingpong,nccl.single.pingpong,mpi.gpu_aware.pingpong"
SIZES=8,64,4K,64K,1M,64M,1G  # every bin of the map once; the latency benchmarks' small sizes
echo "commatlas run --out run --only '$ONLY' --sizes $SIZES --time-budget 0.05 --watchdog 60" > "$W/commands.txt"
timeout -s INT 270 python3 -m commatlas run --out "$W/run" --only "$ONLY" --sizes "$SIZES" --time-budget 0.05 \
  --watchdog 60 > "$W/run.log" 2>&1
echo "run: rc=$?"; head -60 "$W/run.log"
pack

phase "small-size figures per mechanism and launch mode (median per op)"
python3 - "$W/run/results.jsonl" <<'EOF' | tee "$W/table.txt"
import json, sys
from collections import defaultdict
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rows = defaultdict(dict)
for r in recs:
    if r.get("type") == "error":
        print("error", r["benchmark"], r.get("params", {}).get("launch_mode", ""), r.get("bytes"), r.get("message", "")[:150])
    if r.get("type") != "result" or r.get("metric") != "latency":
        continue
    p = r.get("params", {})
    key = (r["benchmark"], p.get("engine", ""), p.get("launch_mode", "-"))
    rows[key][r["bytes"]] = r["stats"]["median_s"]
sizes = [8, 64, 4096, 65536, 1 << 20]
print(f"{'benchmark':34} {'eng':3} {'launch_mode':16}" + "".join(f"{s:>10}" for s in sizes))
for (b, e, m), by in sorted(rows.items()):
    cells = "".join(f"{by[s] * 1e6:>8.2f}us" if s in by else f"{'':>10}" for s in sizes)
    print(f"{b:34} {e:3} {m:16}{cells}")
goal = rows.get(("gpu_initiated.pingpong", "", "persistent"), {}).get(8)
print("GOAL one-way 8 B GPU 0 -> GPU 1, half a persistent ping-pong (peer access):",
      f"{goal * 1e6:.2f} us" if goal else "not measured", "(goal <= 2 us)")
ipc = rows.get(("gpu_initiated.ipc.pingpong", "", "persistent"), {}).get(8)
print("   the same over CUDA IPC, one rank per GPU:", f"{ipc * 1e6:.2f} us" if ipc else "not measured")
EOF
python3 - "$W/run/results.jsonl" <<'EOF' | tee -a "$W/table.txt"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("bandwidth (GB/s) of the GPU-initiated one-way messages and the IPC copies:")
for r in recs:
    if r.get("type") == "result" and r.get("metric") == "bandwidth" and r["bytes"] in (8, 65536, 1 << 20, 64 << 20, 1 << 30):
        p = r.get("params", {})
        print(f"  {r['benchmark']:30} {p.get('engine', ''):3} {r['bytes']:>11} {r.get('bandwidth_gbps', 0):10.3f}")
EOF
grep -A12 'GPU 0 → GPU 1' "$W/run.log" | head -30 > "$W/map-rows.txt"; cat "$W/map-rows.txt"
# A small copy of the records for tests/fixtures/gpu_initiated/ (tests/test_launch_modes.py): every
# record, each sample reservoir cut to its first 32 samples.
mkdir -p "$W/fixture"
python3 - "$W/run/results.jsonl" "$W/fixture/results.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1]) as src, open(sys.argv[2], "w") as dst:
    for line in src:
        if line.strip():
            r = json.loads(line)
            if isinstance(r.get("samples_s"), list):
                r["samples_s"] = r["samples_s"][:32]
            dst.write(json.dumps(r, separators=(",", ":")) + "\n")
EOF
gzip -9 -n "$W/fixture/results.jsonl"  # tests/fixtures keeps a file over 100 KB gzipped
ls -la "$W/fixture"
echo "total $((SECONDS - start)) s"
ls -la "$OUT"
exit 0
