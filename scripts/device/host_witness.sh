#!/usr/bin/env bash
# The host's witness (engine/core/host_activity.h) on a GPU machine, in one device call:
#   memcpy     JOBS fresh jobs of the 32-thread host.memcpy and its bare reference (the issue's
#              stalling case), each point's two passes with what the host did in them;
#   hog        HOG_JOBS more with every CPU kept busy by as many shell loops as CPUs, so that other
#              processes' share and the preemptions must show (and the slowed figures with them);
#   quick      `commatlas run --quick`, timed (the guard);
#   order      scripts/device/order_check.sh for the host family (3 rounds with jobs in the run's
#              order): its default run is the guard's and its checks the alone-vs-full of the
#              changed harness.
# summary.txt: per job and point, both passes' medians with steal, others, preemptions and faults.
# Usage (repository root, .device-carry carried):
#   OUT=/some/dir [JOBS=6] [HOG_JOBS=2] [QUICK=1] [ORDER=1] [ORDER_DEADLINE=300] bash scripts/device/host_witness.sh
# QUICK=0 and ORDER=0 leave out the quick run and the order check (the memcpy jobs alone).
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
source scripts/device/work_folder.sh host_witness
BUILD=build-order
source scripts/device/build_engine.sh "$BUILD" "$W/build.log" || exit 1
SELECT=(--only "host.memcpy,reference.host_memcpy")

for i in $(seq "${JOBS:-6}"); do
  echo "commatlas run ${SELECT[*]} --out memcpy-$i" >> "$W/commands.txt"
  python3 -m commatlas run "${SELECT[@]}" --out "$W/memcpy-$i" > "$W/memcpy-$i.log" 2>&1 || tail -3 "$W/memcpy-$i.log"
done
for i in $(seq "${HOG_JOBS:-2}"); do
  hogs=()
  for _ in $(seq "$(nproc)"); do (while :; do :; done) & hogs+=("$!"); done
  echo "(every CPU kept busy by a shell loop) commatlas run ${SELECT[*]} --out hog-$i" >> "$W/commands.txt"
  python3 -m commatlas run "${SELECT[@]}" --out "$W/hog-$i" > "$W/hog-$i.log" 2>&1 || tail -3 "$W/hog-$i.log"
  kill "${hogs[@]}" 2>/dev/null
  wait "${hogs[@]}" 2>/dev/null
done

if [ "${QUICK:-1}" = 1 ]; then
  echo "commatlas run --quick --out quick" >> "$W/commands.txt"
  { time python3 -m commatlas run --quick --out "$W/quick" > "$W/quick.log" 2>&1; } 2> "$W/quick.time"
  echo "quick: $(grep real "$W/quick.time")"
fi

python3 - "$W" <<'EOF' | tee "$W/summary.txt"
import json, sys
from pathlib import Path
w = Path(sys.argv[1])
def fmt(a):
    if not a:
        return "-"
    share = lambda x: "  -" if x is None else f"{100 * x:3.0f}%"
    held = a.get("most_stolen_cpu_s")
    cpus = "" if held is None else f"(one CPU >= {held * 1e3:3.0f} ms, {a['steal_cpus']:2d} CPUs) "
    return (f"{a['window_s'] * 1e3:6.1f} ms steal {share(a['steal_share'])} {cpus}"
            f"others {share(a['others_share'])} preempt {a['involuntary_switches']:5d} faults {a['page_faults']:5d}")
print("job        benchmark               threads   size  verdict     pass 1 (its batches) / pass 2 (confirmation)")
runs = [p for p in [*w.glob("memcpy-*"), *w.glob("hog-*")] if p.is_dir()]
for run in sorted(runs, key=lambda p: (p.name.split("-")[0], int(p.name.split("-")[1]))):
    f = run / "results.jsonl"
    if not f.exists():
        continue
    recs = [json.loads(l) for l in f.read_text().splitlines() if l.strip()]
    stab = {r["point"]: r["stability"] for r in recs if r["type"] == "stability"}
    for r in recs:
        if r["type"] != "result" or r["bytes"] < 1 << 20:
            continue
        st = stab.get(r["point"], {})
        med = st.get("passes_median_s") or [r["stats"]["median_s"]]
        print(f"{run.name:<10} {r['benchmark']:<22} {r['params'].get('threads', '-')!s:>7} {r['bytes'] >> 20:4d}M  "
              f"{st.get('verdict', '-'):<10}  {' / '.join(f'{m * 1e6:8.1f} us' for m in med)}")
        print(f"{'':>55}{fmt(r['timing'].get('host_activity'))}")
        print(f"{'':>55}{fmt(st.get('host_activity'))}")
EOF

[ "${ORDER:-1}" = 1 ] || exit 0
mkdir -p "$W/order"
OUT=$W/order BUILD=$BUILD ROUNDS=3 IN_ORDER=1 DEADLINE=${ORDER_DEADLINE:-300} FAMILIES="host" \
  bash scripts/device/order_check.sh > "$W/order_check.out" 2>&1
tail -25 "$W/order_check.out"
