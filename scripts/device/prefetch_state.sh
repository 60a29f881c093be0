#!/usr/bin/env bash
# gpu.prefetch moved as a whole between two identical default runs on 2x H100 (managed memory
# prefetched GPU -> host: 16.5 then 9.4 GB/s at 256 MiB, 15.8 then 9.0 at 16 MiB; host -> GPU held).
# A prefetch to the host needs host pages for what it moves, so the host kernel's page supply
# (transparent huge pages, compaction, free memory) is the first suspect. ROUNDS fresh jobs of
# gpu.prefetch alone, each between two snapshots of /proc/vmstat and /proc/meminfo, then a table
# of each job's bandwidths beside the counters that moved.
# Usage (repository root, .device-carry carried; builds into build-order like order_check.sh):
#   OUT=/some/dir [ROUNDS=6] bash scripts/device/prefetch_state.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
W=$(mktemp -d)
exec > >(tee "$W/prefetch_state.log") 2>&1
trap 'tar czf "$OUT/prefetch-state.tar.gz" -C "$W" --exclude="*/report.html" . 2>/dev/null' EXIT
source scripts/device/build_engine.sh build-order "$W/build.log" || exit 1
for f in /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag \
         /sys/kernel/mm/transparent_hugepage/khugepaged/defrag /proc/sys/vm/overcommit_memory; do
  echo "$f: $(cat "$f" 2>/dev/null || echo unreadable)"
done | tee "$W/host-settings.txt"
for k in $(seq 1 "${ROUNDS:-6}"); do
  cat /proc/vmstat > "$W/vmstat-$k-before.txt"; cat /proc/meminfo > "$W/meminfo-$k-before.txt"
  echo "job-$k: commatlas run --only gpu.prefetch --out job-$k" >> "$W/commands.txt"
  timeout -s INT 60 python3 -m commatlas run --only gpu.prefetch --out "$W/job-$k" > "$W/job-$k.log" 2>&1
  echo "job-$k rc=$?"
  cat /proc/vmstat > "$W/vmstat-$k-after.txt"; cat /proc/meminfo > "$W/meminfo-$k-after.txt"
done
python3 - "$W" "${ROUNDS:-6}" <<'EOF' | tee "$W/summary.txt"
import json, sys
from pathlib import Path
w, rounds = Path(sys.argv[1]), int(sys.argv[2])
def table(path):
    out = {}
    for line in path.read_text().splitlines():
        parts = line.replace(":", " ").split()
        if len(parts) >= 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
    return out
watch = ("thp_fault_alloc", "thp_fault_fallback", "thp_collapse_alloc", "compact_stall", "compact_success",
         "pgfault", "pgmajfault", "numa_hint_faults", "pgmigrate_success", "thp_migration_success")
print("job  " + "  ".join(f"{p}@{s}" for p in ("d2h", "h2d") for s in ("16M", "256M")) + "  (GB/s)  "
      + "  ".join(watch) + "  MemFree_GiB  AnonHugePages_MiB")
for k in range(1, rounds + 1):
    results = w / f"job-{k}" / "results.jsonl"
    figures = {}
    if results.exists():
        for line in results.read_text().splitlines():
            r = json.loads(line)
            if r.get("type") == "result" and r.get("benchmark") == "gpu.prefetch":
                figures[(r["params"]["path"], r["bytes"])] = r.get("bandwidth_gbps")
    before, after = table(w / f"vmstat-{k}-before.txt"), table(w / f"vmstat-{k}-after.txt")
    mem = table(w / f"meminfo-{k}-before.txt")
    cells = [figures.get((p, s)) for p in ("d2h", "h2d") for s in (16 << 20, 256 << 20)]
    print(f"{k:<4} " + "  ".join(f"{c:7.2f}" if c else "      -" for c in cells) + "  "
          + "  ".join(str(after.get(c, 0) - before.get(c, 0)) for c in watch)
          + f"  {mem.get('MemFree', 0) / 2**20:.1f}  {mem.get('AnonHugePages', 0) / 1024:.0f}")
EOF
