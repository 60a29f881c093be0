#!/usr/bin/env bash
# Which processes hold a context on which GPU while a job runs? nvidia-smi lists the compute
# processes of every GPU every 0.5 s (apps.txt, each sample headed by its epoch time) while each
# case runs as one fresh `commatlas run` job; the jobs' records and logs go beside it. A rank that
# opened a context on its peer's GPU shows as a second process on that GPU.
# Usage (repository root, .device-carry carried):
#   OUT=/some/dir CASES="alone=nccl.allreduce after=mpi.gpu_aware.*,nccl.allreduce" bash scripts/device/gpu_contexts.sh
# Each CASES word is NAME=SELECTION (the selection as `commatlas run --only` takes it).
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
CASES=${CASES:?set CASES to NAME=SELECTION words}
source scripts/device/work_folder.sh gpu_contexts
nvidia-smi --query-gpu=index,uuid,name,driver_version --format=csv | tee "$W/gpus.csv"
source scripts/device/build_engine.sh build-contexts "$W/build.log" || exit 1
sample_apps() {
  while true; do
    echo "== $(date +%s.%N)"
    nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader
    sleep 0.5
  done
}
in_background sample_apps > "$W/apps.txt" 2>&1
read -ra words <<< "$CASES"
for c in "${words[@]}"; do
  name=${c%%=*}
  echo "$name: $(date +%s.%N) commatlas run --only ${c#*=}" | tee -a "$W/commands.txt"
  timeout -s INT 120 python3 -m commatlas run --out "$W/$name" --only "${c#*=}" > "$W/$name.log" 2>&1
  echo "$name: rc=$? $(date +%s.%N)" | tee -a "$W/commands.txt"
done
stop_background
# Per case: the largest number of processes seen at once on each GPU while its job ran.
python3 - "$W" <<'PY'
import sys
from pathlib import Path
w = Path(sys.argv[1])
samples, t, rows = [], None, []
for line in (w / "apps.txt").read_text().splitlines():
    if line.startswith("== "):
        if t is not None:
            samples.append((t, rows))
        t, rows = float(line[3:]), []
    elif line.strip() and "No running" not in line:
        rows.append([x.strip() for x in line.split(",")])
if t is not None:
    samples.append((t, rows))
spans = {}
for line in (w / "commands.txt").read_text().splitlines():
    name, rest = line.split(": ", 1)
    stamp = float(rest.split()[1] if rest.startswith("rc=") else rest.split()[0])
    spans.setdefault(name, []).append(stamp)
for name, (t0, t1) in spans.items():
    most = {}
    for t, rows in samples:
        if t0 <= t <= t1:
            per_gpu = {}
            for pid, gpu, _ in rows:
                per_gpu.setdefault(gpu, set()).add(pid)
            for gpu, pids in per_gpu.items():
                most[gpu] = max(most.get(gpu, 0), len(pids))
    print(f"{name}: most processes at once per GPU: " + ", ".join(f"{g[-8:]} {n}" for g, n in sorted(most.items())))
PY
