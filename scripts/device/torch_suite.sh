#!/usr/bin/env bash
# The torch suite on nvidia-h100-x2, beside the engine's figures for the same movements, in ONE call
# (about 6 minutes; every step has its own time limit so the script always returns what it has):
#   1. build the engine against the CUDA-aware Open MPI carried in .device-carry/ (as the other
#      scripts do); PyTorch is the image's (python3 has torch 2.11)
#   2. one `commatlas run` with the engine's copy-engine copies, NCCL with a rank per GPU and its
#      bucketed-allreduce pattern at the GPT-2-small gradient's size, and the torch suite
#      (tensor.copy_, torch.distributed all_reduce / all_gather / send-recv, the DDP step by
#      bucket_cap_mb), all at the engine's transfer grid: one run folder, one report
#   3. `commatlas report` of it (summary.md and report.html: "What PyTorch adds", the DDP step beside
#      the engine's pattern); what_pytorch_adds.md holds the same tables on their own
#   4. the torch suite's own wall time, from its records' time stamps (the default-run question)
# Usage (repository root, .device-carry carried):
#   OUT=/some/dir bash scripts/device/torch_suite.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
# Kept in every process (the suite sets them again in its own).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=$(mktemp -d)
exec > >(tee "$W/torch_suite.log") 2>&1
start=$SECONDS
phase() { echo; echo "== $* (t=$((SECONDS - start)) s, $(date -u +%FT%TZ))"; }
trap 'cp "$W/torch_suite.log" "$OUT/" 2>/dev/null; tar czf "$OUT/torch-suite.tar.gz" -C "$W" --exclude="*.html" . 2>/dev/null' EXIT

phase "machine"
nvidia-smi --query-gpu=index,name,driver_version --format=csv
nvidia-smi topo -m
nproc
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'nccl', torch.cuda.nccl.version(), 'gpus', torch.cuda.device_count())"

phase "CUDA-aware Open MPI, then the engine against it"
source scripts/device/build_engine.sh build-torch "$W/build.log" || exit 1

# GPT-2 small as the suite builds it (tied embeddings): 124,439,808 float32 gradients.
GRADIENT=497759232
ENGINE_KEYS='gpu.copy_ce,gpu.copy_ce_matrix,nccl.allreduce,nccl.allgather,nccl.bandwidth,nccl.pingpong,pattern.bucketed_allreduce.nccl'

run() {  # run NAME LIMIT ARGS...: one timed commatlas run into $W/NAME
  local name=$1 limit=$2; shift 2
  phase "$name: commatlas run $*"
  echo "$name: commatlas run --out $name $*" >> "$W/commands.txt"
  local t0=$SECONDS
  timeout -s INT "$limit" python3 -m commatlas run --out "$W/$name" "$@" > "$W/$name.log" 2>&1
  local rc=$?
  echo "$name: rc=$rc wall=$((SECONDS - t0)) s"; tail -30 "$W/$name.log"
  echo "$name $((SECONDS - t0)) $rc $*" >> "$W/walls.txt"
  cp "$W/$name.log" "$W/$name/terminal.txt" 2>/dev/null
}

run beside 300 --only "$ENGINE_KEYS,torch.*" --sizes "8,4096,65536,1048576,16777216,268435456,$GRADIENT" --watchdog 60

phase "report: what PyTorch adds, the DDP step beside the engine's pattern"
python3 -m commatlas report "$W/beside" > "$W/report.log" 2>&1; echo "report: rc=$?"
python3 - "$W/beside/results.jsonl" <<'PY' | tee "$W/what_pytorch_adds.md"
import sys
from pathlib import Path
from commatlas.frameworks.torch import compare
from commatlas.io.records import read_records
records = read_records(Path(sys.argv[1]))
print(compare.section_markdown(records))
torch_records = [r for r in records if r.get("suite") == "torch"]
print(f"torch records: {sum(r['type'] == 'result' for r in torch_records)} results, "
      f"{sum(r['type'] == 'skip' for r in torch_records)} skips, {sum(r['type'] == 'error' for r in torch_records)} errors")
for r in torch_records:
    if r["type"] != "result":
        print(f"  {r['type']}: {r['benchmark']} {r.get('bytes')}: {r.get('reason') or r.get('message')}")
# The suite runs after the engine's phases: from the last engine record to its last record.
engine_times = [r["time"] for r in records if r.get("type") in ("result", "skip", "error") and r.get("suite") != "torch"]
torch_times = [r["time"] for r in torch_records]
if engine_times and torch_times:
    print(f"torch suite wall time (after the engine's last record): {max(torch_times) - max(engine_times):.1f} s")
PY
ls -la "$W/beside"
phase "done"
