#!/usr/bin/env bash
# Is a small SM copy slower alone than inside the full run because the GPU's clocks are still low?
# In one device call on a 2-GPU kind: build for sm_90 (no MPI needed), sample the GPUs' SM clocks
# and power with nvidia-smi every 50 ms in the background, then run gpu.copy_sm at 4 KiB and 64 KiB
#   alone      the benchmark first in a fresh job (as `commatlas check-order` measures it)
#   after      the same job with gpu.copy_ce before it (as inside the full run, where copy_ce runs first)
# twice each, interleaved. The records' time stamps set each point against the clocks sampled then.
# Everything lands in $OUT/clock_ramp.tar.gz plus the log.
# Usage (repository root): OUT=/some/dir bash scripts/device/clock_ramp.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
W=$(mktemp -d)/clock_ramp
mkdir -p "$W"
exec > >(tee "$OUT/clock_ramp.log") 2>&1
trap 'tar czf "$OUT/clock_ramp.tar.gz" -C "$(dirname "$W")" clock_ramp' EXIT
nvidia-smi --query-gpu=index,name,clocks.max.sm,clocks.applications.graphics --format=csv | tee "$W/nvidia-smi.csv"
{ cmake -B build-clock -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMATLAS_WITH_CUDA=ON -DCOMMATLAS_WITH_NCCL=OFF \
    -DCOMMATLAS_WITH_MPI=OFF -DCOMMATLAS_BUILD_TESTS=OFF && cmake --build build-clock -j32 --target commatlas-engine; } \
  > "$W/build.log" 2>&1 || { tail -30 "$W/build.log"; exit 1; }
ENGINE=$PWD/build-clock/engine/commatlas-engine
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv,noheader -lms 50 \
  > "$W/clocks.csv" &
SMI=$!
sleep 3  # idle clocks before the first job
for round in 1 2; do
  for kind in alone after; do
    only=gpu.copy_sm
    [ "$kind" = after ] && only=gpu.copy_ce,gpu.copy_sm
    echo "$kind-$round: commatlas-engine run --only $only --sizes 4K,64K" | tee -a "$W/commands.txt"
    timeout 120 "$ENGINE" run --only "$only" --sizes 4K,64K --progress none --out "$W/$kind-$round.jsonl" \
      > "$W/$kind-$round.log" 2>&1
    sleep 3  # let the GPU go idle again, as between two jobs
  done
done
kill $SMI
python3 - "$W" <<'PY' | tee "$W/table.txt"
import csv, json, sys
from datetime import datetime, timezone
from pathlib import Path
w = Path(sys.argv[1])
clocks = []  # (epoch seconds, gpu, sm MHz, power W)
for row in csv.reader(open(w / "clocks.csv")):
    try:
        t = datetime.strptime(row[0].strip(), "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=timezone.utc).timestamp()
        clocks.append((t, int(row[1]), float(row[2].split()[0]), float(row[4].split()[0])))
    except (ValueError, IndexError):
        pass
def clock_at(t0, t1, gpu):
    seen = [c[2] for c in clocks if t0 - 0.05 <= c[0] <= t1 + 0.05 and c[1] == gpu]
    return f"{min(seen):.0f}-{max(seen):.0f}" if seen else "-"
print("job        bytes  path  direction  GB/s     SM MHz of the point's GPU while it ran")
for f in sorted(w.glob("*.jsonl")):
    for r in (json.loads(l) for l in f.read_text().splitlines() if l.strip()):
        if r.get("type") != "result" or r["benchmark"] != "gpu.copy_sm":
            continue
        p = r["params"]
        gpu = p.get("src_gpu", 0) if p.get("engine_side") == "src" else p.get("dst_gpu", 0)
        t1 = r["time"]; t0 = t1 - r["cost"]["wall_s"]
        print(f"{f.stem:<10} {r['bytes']:>6}  {p.get('path', ''):<5} {p.get('direction', ''):<9} "
              f"{r['bandwidth_gbps']:7.2f}  {clock_at(t0, t1, gpu)}")
PY
echo "nvidia-smi clock samples: $(wc -l < "$W/clocks.csv")"
