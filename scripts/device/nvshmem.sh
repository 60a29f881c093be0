#!/usr/bin/env bash
# NVSHMEM as a mechanism (nvshmem.*), in one device call on nvidia-h100-x2 (<= 9 min): find the
# image's NVSHMEM (NVSHMEM_HOME, else the nvidia-nvshmem wheel beside PyTorch: .../nvidia/nvshmem with
# include/ and lib/), build for sm_90 against it, then
#   check      the engine was built with NVSHMEM (else stop: nothing here could be measured)
#   selfcheck  the planted faults, each must fail its point and never pass:
#              COMMATLAS_TEST_SKIP_MOVE=1 (signals raised, no payload put): every point
#              "data check failed";
#              COMMATLAS_TEST_NVSHMEM_NO_PEER=1 (rank 1 launches nothing, rank 0 waits in
#              nvshmem_signal_wait_until, which has no timeout): the watchdog's error record names
#              the point
#   focused    nvshmem.* beside nccl_device.* (NCCL's device API), gpu_initiated.ipc.* (the
#              repository's own stores + flag, CUDA IPC) and nccl.pingpong / nccl.bandwidth, one rank
#              per GPU, at the sizes of the map's bins, NVSHMEM_DEBUG=WARN (NVSHMEM's own reason
#              wherever it refuses something)
#   run        `commatlas run` over the same benchmarks: records, the map rows, answers, report
#   table      one-way GPU 0 -> GPU 1 figures per mechanism and variant, bandwidths, skips and errors
# Everything lands in $OUT as nvshmem.tar.gz (records, logs, commands) plus the log itself.
# Usage (repository root; .device-carry carried for the CUDA-aware Open MPI, else the image's MPI):
#   OUT=/some/dir scripts/device/nvshmem.sh
# NVSHMEM_HOME=/path picks the NVSHMEM to build against (its include/ holds nvshmem.h).
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1  # NVLink multicast stays off on the lent machines
# Both ranks on one node: NVSHMEM's unique-ID bootstrap talks over loopback (the lent machines reach
# nothing outside, and may have no other interface up).
export NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=${NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME:-lo}
W=$(mktemp -d)/nvshmem
mkdir -p "$W"
exec > >(tee "$OUT/nvshmem.log") 2>&1
start=$SECONDS
phase() { echo; echo "== $* (t=$((SECONDS - start)) s, $(date -u +%FT%TZ))"; }
pack() { tar czf "$OUT/nvshmem.tar.gz" -C "$(dirname "$W")" nvshmem; }  # after every phase
trap pack EXIT

phase "machine"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv | tee "$W/nvidia-smi.csv"
nvidia-smi topo -m > "$W/topo-m.txt" 2>&1; head -4 "$W/topo-m.txt"

phase "MPI (the carried CUDA-aware Open MPI where carried, else the image's)"
MPI_ARGS=()
if [ -f .device-carry/openmpi-4.1.4-cuda-ubuntu24.tgz ]; then
  CUDA_OMPI=/opt/ompi-cuda
  tar xzf .device-carry/openmpi-4.1.4-cuda-ubuntu24.tgz -C /opt || exit 1
  export OPAL_PREFIX=$CUDA_OMPI PATH=$CUDA_OMPI/bin:$PATH LD_LIBRARY_PATH=$CUDA_OMPI/lib:${LD_LIBRARY_PATH:-}
  MPI_ARGS=("-DMPI_C_COMPILER=$CUDA_OMPI/bin/mpicc")
fi
command -v mpirun && mpirun --version | head -1

phase "NVSHMEM, then the engine against it"
# NVSHMEM_HOME, else each Python's nvidia.nvshmem (the wheel PyTorch depends on), else the usual
# prefixes; every place looked at is printed.
find_nvshmem() {
  local d py
  for d in ${NVSHMEM_HOME:+"$NVSHMEM_HOME"}; do
    echo "looked at NVSHMEM_HOME=$d" >&2
    [ -f "$d/include/nvshmem.h" ] && { echo "$d"; return 0; }
  done
  for py in python3 /opt/conda/bin/python3 /usr/bin/python3 /usr/local/bin/python3; do
    command -v "$py" > /dev/null || continue
    d=$("$py" -c "import nvidia.nvshmem as m; print(list(m.__path__)[0])" 2>/dev/null)  # a namespace package
    echo "looked at $py's nvidia.nvshmem: ${d:-not importable}" >&2
    [ -n "$d" ] && [ -f "$d/include/nvshmem.h" ] && { echo "$d"; return 0; }
  done
  for d in /usr/local/nvshmem /opt/nvshmem /usr/lib/x86_64-linux-gnu/nvshmem/13 /usr/lib/x86_64-linux-gnu/nvshmem/12 /usr; do
    echo "looked at $d" >&2
    [ -f "$d/include/nvshmem.h" ] || [ -f "$d/include/nvshmem/nvshmem.h" ] && { echo "$d"; return 0; }
  done
  return 1
}
if ! NVSHMEM_DIR=$(find_nvshmem); then
  echo "STOP: no NVSHMEM found (looked in the places above); NVSHMEM_HOME=... names one"
  exit 1
fi
echo "NVSHMEM: $NVSHMEM_DIR"; ls "$NVSHMEM_DIR/lib" | head -20
grep -h "define NVSHMEM_VENDOR_M\|define NVSHMEM_VENDOR_PATCH" "$NVSHMEM_DIR"/include/non_abi/nvshmem_version.h 2>/dev/null
export LD_LIBRARY_PATH=$NVSHMEM_DIR/lib:${LD_LIBRARY_PATH:-}
# The NCCL CMake finds first may be one without nccl_device.h (a PyTorch wheel's): look for one
# that has it, and its library beside it.
nccl_with_device_api() {
  local d lib
  for d in ${NCCL_HOME:+$NCCL_HOME/include} /usr/include /usr/local/cuda/include /usr/local/include /usr/local/nccl/include; do
    [ -f "$d/nccl_device.h" ] || continue
    for lib in "$(dirname "$d")/lib/libnccl.so.2" "$(dirname "$d")/lib64/libnccl.so.2" \
               "$(dirname "$d")/lib/x86_64-linux-gnu/libnccl.so.2" /usr/lib/x86_64-linux-gnu/libnccl.so.2; do
      [ -f "$lib" ] && { echo "$d $lib"; return 0; }
    done
  done
  return 1
}
CMAKE_ARGS=(-DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_WITH_CUDA=ON -DCOMMATLAS_WITH_NCCL=ON -DCOMMATLAS_WITH_MPI=ON
            -DCOMMATLAS_WITH_NVSHMEM=ON -DNVSHMEM_HOME="$NVSHMEM_DIR" -DCOMMATLAS_BUILD_TESTS=OFF "${MPI_ARGS[@]}")
cmake -B build-nv "${CMAKE_ARGS[@]}" > "$W/configure.log" 2>&1 || { tail -40 "$W/configure.log"; exit 1; }
grep -h "commatlas: NVSHMEM\|commatlas: NCCL" "$W/configure.log"
inc=$(sed -n 's/^NCCL_INCLUDE_DIR:PATH=//p' build-nv/CMakeCache.txt)
if [ ! -f "$inc/nccl_device.h" ] && found=$(nccl_with_device_api); then
  read -r inc lib <<< "$found"
  echo "CMake's NCCL has no nccl_device.h; building against $inc and $lib (nccl_device.* beside nvshmem.*)"
  cmake -B build-nv "${CMAKE_ARGS[@]}" -DNCCL_INCLUDE_DIR="$inc" -DNCCL_LIBRARY="$lib" >> "$W/configure.log" 2>&1 ||
    { tail -40 "$W/configure.log"; exit 1; }
fi
cmake --build build-nv -j"$(nproc)" --target commatlas-engine > "$W/build.log" 2>&1 || { tail -40 "$W/build.log"; exit 1; }
echo "build: $((SECONDS - start)) s"
export COMMATLAS_ENGINE=$PWD/build-nv/engine/commatlas-engine PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
$COMMATLAS_ENGINE info > "$W/engine-info.json"
$COMMATLAS_ENGINE list 2>&1 | grep -E '^nvshmem|^nccl_device|^gpu_initiated.ipc|^nccl\.(pingpong|bandwidth) ' | tee "$W/list.txt"
if grep -q "built without NVSHMEM" "$W/list.txt"; then
  echo "STOP: this engine has no NVSHMEM (see the reason above); nothing here can be measured"
  exit 1
fi

MPIRUN=(mpirun --allow-run-as-root -n 2 -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NVLS -x NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME
        -x NCCL_DEBUG -x NVSHMEM_DEBUG
        -x COMMATLAS_TEST_SKIP_MOVE -x COMMATLAS_TEST_NVSHMEM_NO_PEER -x LD_LIBRARY_PATH -x PATH)
[ -n "${OPAL_PREFIX:-}" ] && MPIRUN+=(-x OPAL_PREFIX)
NV='nvshmem.pingpong,nvshmem.bandwidth'
ND='nccl_device.pingpong,nccl_device.bandwidth'

phase "self-check: planted faults"
mkdir -p "$W/selfcheck"
echo "COMMATLAS_TEST_SKIP_MOVE=1 mpirun -n 2 commatlas-engine run --mpi --only $NV --sizes 1M,64K,4K,8" >> "$W/commands.txt"
env COMMATLAS_TEST_SKIP_MOVE=1 timeout 120 "${MPIRUN[@]}" "$COMMATLAS_ENGINE" run --mpi --only "$NV" \
  --sizes 1M,64K,4K,8 --time-budget 0.01 --watchdog 30 --progress none --out "$W/selfcheck/skipmove.jsonl" \
  > "$W/selfcheck/skipmove.log" 2>&1
echo "skipmove: rc=$?"
echo "COMMATLAS_TEST_NVSHMEM_NO_PEER=1 mpirun -n 2 commatlas-engine run --mpi --only nvshmem.pingpong --sizes 8 --watchdog 15" >> "$W/commands.txt"
env COMMATLAS_TEST_NVSHMEM_NO_PEER=1 timeout 90 "${MPIRUN[@]}" "$COMMATLAS_ENGINE" run --mpi \
  --only nvshmem.pingpong --sizes 8 --time-budget 0.01 --watchdog 15 --progress none \
  --out "$W/selfcheck/nopeer.jsonl" > "$W/selfcheck/nopeer.log" 2>&1
echo "nopeer: rc=$? (a watchdog stop is 3, or mpirun's status for a rank that exited 3)"
python3 - "$W/selfcheck" <<'EOF' | tee "$W/selfcheck/verdict.txt"
import json, sys
from collections import Counter
from pathlib import Path
d = Path(sys.argv[1])
def records(name):
    f = d / f"{name}.jsonl"
    return [json.loads(l) for l in f.read_text().splitlines() if l.strip()] if f.exists() else []
failed = False
points = [r for r in records("skipmove") if r.get("type") in ("result", "error")]
wrong = [r for r in points if r["type"] == "result" or "data check failed" not in r.get("message", "")]
skips = Counter(r.get("reason", "")[:90] for r in records("skipmove") if r.get("type") == "skip")
print(f"skipmove: {dict(Counter(r['type'] for r in points))}; not failing as planted: {len(wrong)}; skips: {dict(skips)}")
for r in wrong[:6]:
    print("   ", r["benchmark"], r.get("params", {}).get("put"), r.get("bytes"), r["type"], (r.get("message") or "")[:160])
failed |= bool(wrong) or not points
nopeer = [r for r in records("nopeer") if r.get("type") in ("result", "error")]
stopped = [r for r in nopeer if r["type"] == "error" and "watchdog" in r.get("message", "")]
print(f"nopeer: {dict(Counter(r['type'] for r in nopeer))}; stopped by the watchdog: {len(stopped)}")
for r in nopeer[:3]:
    print("   ", r["benchmark"], r.get("bytes"), r["type"], (r.get("message") or "")[:160])
failed |= not stopped or any(r["type"] == "result" for r in nopeer)
print("SELF-CHECK", "FAILED" if failed else "PASSED: every planted fault failed its point")
EOF
grep -h -i -m5 "nvshmem.*warn\|warn\|error" "$W"/selfcheck/*.log | head -8
pack

phase "focused: nvshmem beside NCCL's device API, the GPU-initiated stores and NCCL, one rank per GPU"
mkdir -p "$W/focused"
FOCUS="$NV,$ND,gpu_initiated.ipc.pingpong,gpu_initiated.ipc.bandwidth,nccl.pingpong,nccl.bandwidth"
FSIZES=8,64,4K,64K,1M,64M,1G
echo "NVSHMEM_DEBUG=WARN mpirun -n 2 commatlas-engine run --mpi --only '$FOCUS' --sizes $FSIZES --time-budget 0.05" >> "$W/commands.txt"
env NVSHMEM_DEBUG=WARN NCCL_DEBUG=WARN timeout 150 "${MPIRUN[@]}" "$COMMATLAS_ENGINE" run --mpi --only "$FOCUS" \
  --sizes "$FSIZES" --time-budget 0.05 --watchdog 60 --progress none --out "$W/focused/results.jsonl" \
  > "$W/focused/engine.log" 2>&1
echo "focused: rc=$?"
grep -h -i -m8 "warn\|error" "$W/focused/engine.log" | head -8
pack

phase "commatlas run: the map with NVSHMEM in it"
ONLY="$NV,$ND,gpu_initiated.ipc.pingpong,gpu_initiated.ipc.bandwidth,gpu_initiated.pingpong,nccl.pingpong,nccl.bandwidth"
SIZES=8,64,4K,64K,1M,64M,1G  # every bin of the map once
echo "commatlas run --out run --only '$ONLY' --sizes $SIZES --time-budget 0.05 --watchdog 60" >> "$W/commands.txt"
timeout -s INT 200 python3 -m commatlas run --out "$W/run" --only "$ONLY" --sizes "$SIZES" --time-budget 0.05 \
  --watchdog 60 > "$W/run.log" 2>&1
echo "run: rc=$?"; head -60 "$W/run.log"
pack

phase "figures (median per op), skips and errors"
python3 - "$W/focused/results.jsonl" "$W/run/results.jsonl" <<'EOF' | tee "$W/table.txt"
import json, sys
from collections import defaultdict
from pathlib import Path
for path in sys.argv[1:]:
    f = Path(path)
    recs = [json.loads(l) for l in f.read_text().splitlines() if l.strip()] if f.exists() else []
    print(f"--- {f.parent.name}: {len(recs)} records")
    lat, bw = defaultdict(dict), defaultdict(dict)
    for r in recs:
        p = r.get("params", {})
        if r.get("type") in ("skip", "error") and r.get("benchmark", "").startswith(("nvshmem", "nccl_device")):
            print(r["type"], r["benchmark"], p.get("put") or p.get("signal", ""), r.get("bytes"),
                  (r.get("reason") or r.get("message") or "")[:200])
        if r.get("type") != "result":
            continue
        key = (r["benchmark"], p.get("put") or p.get("signal") or p.get("launch_mode") or p.get("engine") or "-")
        ok = (r.get("verified") or {}).get("ok", False)
        if r.get("metric") == "latency":
            lat[key][r["bytes"]] = f"{r['stats']['median_s'] * 1e6:.2f}" + ("" if ok else "!")
        else:
            bw[key][r["bytes"]] = f"{r.get('bandwidth_gbps', 0):.1f}" + ("" if ok else "!")
    sizes = [8, 64, 4096, 65536, 1 << 20]
    print("one-way GPU 0 -> GPU 1, half a ping-pong, median us ('!': not verified)")
    print(f"{'benchmark':30}{'variant':16}" + "".join(f"{s:>9}" for s in sizes))
    for (b, v), by in sorted(lat.items()):
        print(f"{b:30}{v:16}" + "".join(f"{by.get(s, '-'):>9}" for s in sizes))
    bsizes = [8, 65536, 1 << 20, 64 << 20, 1 << 30]
    print("one-way bandwidth, GB/s")
    print(f"{'benchmark':30}{'variant':16}" + "".join(f"{s:>11}" for s in bsizes))
    for (b, v), by in sorted(bw.items()):
        print(f"{b:30}{v:16}" + "".join(f"{by.get(s, '-'):>11}" for s in bsizes))
    for r in recs:
        if r.get("type") == "result" and r["benchmark"] == "nvshmem.pingpong" and r["bytes"] in (8, 65536):
            print("latency_includes", r["params"].get("put"), r["bytes"], ":", r.get("latency_includes", "")[:400])
EOF
grep -B2 -A14 'GPU 0 → GPU 1' "$W/run.log" | head -40 > "$W/map-rows.txt"; cat "$W/map-rows.txt"
# A small copy of the map run's records for tests/fixtures/nvshmem/ (tests/test_nvshmem.py):
# every record, each sample reservoir cut to its first 32 samples.
mkdir -p "$W/fixture"
[ -f "$W/run/results.jsonl" ] && python3 - "$W/run/results.jsonl" "$W/fixture/results.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1]) as src, open(sys.argv[2], "w") as dst:
    for line in src:
        if line.strip():
            r = json.loads(line)
            if isinstance(r.get("samples_s"), list):
                r["samples_s"] = r["samples_s"][:32]
            dst.write(json.dumps(r, separators=(",", ":")) + "\n")
EOF
ls -la "$W/fixture"
echo "total $((SECONDS - start)) s"
ls -la "$OUT"
exit 0
