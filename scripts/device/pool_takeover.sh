#!/usr/bin/env bash
# The host worker pool against the files a change replaced, in one device call. On the 2- and
# 4-GPU kinds a copy over every CPU waited for every worker to see its release, also those with no
# bytes to copy: 7 us at 16 B over 32 threads, and 3-6 ms a copy while the host held one of 64
# vCPUs. Here host.memcpy and reference.host_memcpy over every thread (and one), built from this
# tree ("after") and with the files the change replaced ("before", carried in
# .device-carry/pool-before/ with their paths):
#   1. two rounds, interleaved: each engine quiet, then with one CPU of the node kept busy by
#      another process (the host taking a CPU away, planted: a pinned spinning shell);
#   2. with that CPU busy, 4 KiB, 1 MiB and 16 MiB over a fixed 0.5 s each (--precision off), so
#      that the samples span the scheduler's time slices and their spread shows the stalls.
# The table's "late" column counts timing.late_worker_ops, which only the takeover pool of commit
# fbf9b93 recorded (results/nvidia-h200-x2/pool-32/README.md says why it did not stay).
# Usage (repository root, .device-carry carried): OUT=/some/dir bash scripts/device/pool_takeover.sh
set -uo pipefail
source scripts/device/work_folder.sh pool_takeover
lscpu > "$W/lscpu.txt"; grep -E "^(CPU\(s\)|NUMA node|Model name|Hypervisor)" "$W/lscpu.txt"; uname -r
before=$(mktemp -d)  # outside W: the pack holds records, not sources

cp -a CMakeLists.txt engine schema python "$before"/ && cp -a .device-carry/pool-before/. "$before"/ || exit 1
host_only=(-DCOMMATLAS_WITH_CUDA=OFF -DCOMMATLAS_WITH_NCCL=OFF -DCOMMATLAS_WITH_MPI=OFF -DCOMMATLAS_WITH_NVSHMEM=OFF
           -DCOMMATLAS_WITH_HIP=OFF -DCOMMATLAS_BUILD_TESTS=OFF)
t0=$SECONDS
{ cmake -S . -B build-after "${host_only[@]}" && cmake --build build-after -j"$(( $(nproc) / 2 ))" --target commatlas-engine; } > "$W/build-after.log" 2>&1 &
{ cmake -S "$before" -B "$before/build" "${host_only[@]}" && cmake --build "$before/build" -j"$(( $(nproc) / 2 ))" --target commatlas-engine; } > "$W/build-before.log" 2>&1
wait $! || { tail -30 "$W/build-after.log"; exit 1; }
[ -x "$before/build/engine/commatlas-engine" ] || { tail -30 "$W/build-before.log"; exit 1; }
echo "builds: $((SECONDS - t0)) s"
export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
busy_cpu=$(( $(nproc) - 1 ))
run() {  # NAME ENGINE ARGS...
  local name=$1 engine=$2; shift 2
  echo "COMMATLAS_ENGINE=<$name engine> commatlas run --out $name --suite host $*" >> "$W/commands.txt"
  local t=$SECONDS
  COMMATLAS_ENGINE=$engine timeout 240 python3 -m commatlas run --out "$W/$name" --suite host "$@" > "$W/$name.log" 2>&1
  echo "$name: rc=$? $((SECONDS - t)) s"
}
default=(--only "host.memcpy,reference.host_memcpy")
for round in 1 2; do
  for side in before after; do
    engine=$PWD/build-after/engine/commatlas-engine
    [ "$side" = before ] && engine=$before/build/engine/commatlas-engine
    run "$side-quiet-$round" "$engine" "${default[@]}"
    in_background taskset -c "$busy_cpu" sh -c 'while :; do :; done'
    run "$side-busy-$round" "$engine" "${default[@]}"
    stop_background
  done
done
for side in before after; do
  engine=$PWD/build-after/engine/commatlas-engine
  [ "$side" = before ] && engine=$before/build/engine/commatlas-engine
  in_background taskset -c "$busy_cpu" sh -c 'while :; do :; done'
  run "$side-busy-fixed" "$engine" --only host.memcpy --sizes 4K,1M,16M --precision off --time-budget 0.5
  stop_background
done
python3 - "$W" <<'PY' | tee "$W/table.txt"
import json, pathlib, sys
rows = {}
for path in sorted(pathlib.Path(sys.argv[1]).glob("*-*-*/results.jsonl")):
    run = path.parent.name
    for line in open(path):
        r = json.loads(line)
        if r.get("type") != "result" or r["benchmark"] != "host.memcpy" or r["params"]["threads"] == 1:
            continue
        t, s = r["timing"], r["stats"]
        ops = t["samples"] * t["ops_per_sample"]
        late = t.get("late_worker_ops")
        rows.setdefault((r["bytes"], run.split("-", 1)[1]), []).append(
            f"{run.split('-')[0]:6s} med {s['median_s'] * 1e6:9.2f} mean {s['mean_s'] * 1e6:9.2f} us"
            f" max {s['max_s'] * 1e6:8.0f} late {'-' if late is None else f'{late}/{ops}'}")
print("bytes      run       per engine: median and mean per copy, longest sample, copies with a late thread")
for (size, run), cells in sorted(rows.items()):
    print(f"{size:10d} {run:9s} " + " | ".join(cells))
PY
