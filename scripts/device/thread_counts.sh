#!/usr/bin/env bash
# What a many-vCPU VM's host does to a copy over all its CPUs, in one device call: on 4x H100 and
# 4x H200 (64 vCPUs) host.memcpy over 64 threads took 3.0 ms a copy from 16 B to 16 MiB, with the
# hypervisor taking 17-45% of the VM's CPU time, while 32 threads on the 32-vCPU 2-GPU kinds took
# 6.7 us at 16 B. Here:
#   1. busy_steal.c: N pinned threads only read their clock for 2 s; the steal and the gaps each
#      thread saw, for N from 8 to all CPUs (the host's behaviour, without commatlas);
#   2. host.memcpy and reference.host_memcpy with --threads N for the same N, twice, in opposite
#      orders (records of each run under t<N>-<pass>/).
# Usage (repository root, .device-carry carried): OUT=/some/dir [COUNTS="64 63 62 60 56 48 32 16"] bash scripts/device/thread_counts.sh
set -uo pipefail
source scripts/device/work_folder.sh thread_counts
lscpu > "$W/lscpu.txt"; grep -E "^(CPU\(s\)|Thread|Core|Socket|NUMA node|Model name|Hypervisor)" "$W/lscpu.txt"
cpus=$(nproc)
COUNTS=${COUNTS:-"$cpus $((cpus - 1)) $((cpus - 2)) $((cpus - 4)) $((cpus * 7 / 8)) $((cpus * 3 / 4)) $((cpus / 2)) $((cpus / 4))"}
COUNTS=$(echo "$COUNTS" | tr ' ' '\n' | awk '$1 > 0 && !seen[$1]++' | tr '\n' ' ')  # 16 vCPUs: 16 - 2 = 16 * 7 / 8
cc -O2 -pthread scripts/device/busy_steal.c -o "$W/busy_steal" || exit 1
echo "== busy threads only (2 s each)"
# shellcheck disable=SC2086  # COUNTS is a list
"$W/busy_steal" 2 $COUNTS | tee "$W/busy-steal.txt"
source scripts/device/build_engine.sh build-threads "$W/build.log" || exit 1
reverse=$(echo "$COUNTS" | tr ' ' '\n' | tac | tr '\n' ' ')
for pass in 1 2; do
  order=$COUNTS; [ "$pass" = 2 ] && order=$reverse
  for n in $order; do
    args=(--suite host --only "host.memcpy,reference.host_memcpy" --threads "$n" --sizes "16,64K,1M,16M,256M")
    echo "commatlas run --out t$n-$pass ${args[*]}" >> "$W/commands.txt"
    timeout 120 python3 -m commatlas run --out "$W/t$n-$pass" "${args[@]}" > "$W/t$n-$pass.log" 2>&1
    echo "t$n-$pass: rc=$?"
  done
done
python3 - "$W" <<'PY' | tee "$W/table.txt"
import json, pathlib, sys
rows = {}
for path in sorted(pathlib.Path(sys.argv[1]).glob("t*-*/results.jsonl")):
    for line in open(path):
        r = json.loads(line)
        if r.get("type") != "result" or r["benchmark"] != "host.memcpy" or r["params"]["threads"] == 1:
            continue
        a = r["timing"].get("host_activity") or {}
        rows.setdefault((r["params"]["threads"], r["bytes"]), []).append(
            f"{r['stats']['median_s'] * 1e6:9.1f} us {r['bandwidth_gbps']:8.2f} GB/s steal {a.get('steal_share') or 0:.2f}")
print("threads      bytes  per pass: median, bandwidth, steal share of the node")
for (n, size), cells in sorted(rows.items(), key=lambda kv: (-kv[0][0], kv[0][1])):
    print(f"{n:7d} {size:10d}  " + " | ".join(cells))
PY
