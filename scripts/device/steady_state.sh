#!/usr/bin/env bash
# Why a GPU-aware MPI figure depends on what ran before it, on nvidia-h100-x2 (or any 2-GPU kind):
# build against the CUDA-aware Open MPI carried in .device-carry/, then run mpi.gpu_aware.bandwidth
# alone and after other benchmarks, with Open MPI's smcuda IPC handshake made verbose, and the
# 32-thread host memcpy three times. Each case lands in its own folder, packed into one tarball.
# CASES picks the runs (default: the GPU-aware MPI cases and the memcpy runs); `default` and
# `quick` add a whole `commatlas run` (both GPUs) and `--quick`, with their wall times.
# Usage (repository root, .device-carry carried): OUT=/some/dir [CASES="gpu_aware memcpy default"] scripts/device/steady_state.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=$(mktemp -d)
exec > >(tee "$W/steady_state.log") 2>&1
start=$SECONDS
phase() { echo; echo "== $* (t=$((SECONDS - start)) s, $(date -u +%FT%TZ))"; }
pack() { tar czf "$OUT/steady-state.tar.gz" -C "$W" . ; }
trap pack EXIT

phase "machine"
nvidia-smi --query-gpu=index,name,driver_version --format=csv
nvidia-smi topo -m | head -4
nproc

phase "CUDA-aware Open MPI, then the engine against it"
source scripts/device/build_engine.sh build-ss "$W/build.log" || exit 1
ompi_info --param btl smcuda --level 9 2>/dev/null | grep -iE 'ipc|cuda' > "$W/ompi-smcuda-params.txt"

run() {  # run NAME ARGS...: one commatlas run into $W/NAME; prints the GPU-aware bandwidth points
  local name=$1; shift
  phase "$name: commatlas run $*"
  echo "$name: commatlas run --out $name $*" >> "$W/commands.txt"
  local t0=$SECONDS
  timeout -s INT 150 python3 -m commatlas run --out "$W/$name" --watchdog 60 "$@" > "$W/$name.log" 2>&1
  echo "$name: rc=$? wall=$((SECONDS - t0)) s"
  python3 - "$W/$name/results.jsonl" <<'PY'
import json, sys
try:
    lines = open(sys.argv[1]).read().splitlines()
except OSError as e:
    print("  no records:", e); sys.exit()
for l in lines:
    r = json.loads(l)
    if r.get("type") != "result" or not r["benchmark"].startswith(("mpi.gpu_aware", "host.memcpy", "reference.host")):
        continue
    p = r.get("params", {})
    med = r["stats"]["median_s"]
    print(f"  {r['benchmark']:28s} {p.get('allocator', p.get('threads', '')):>8} {r['bytes']:>10} median {med:.3e} s"
          f"  {r.get('bandwidth_gbps')} GB/s  cv {r['stats']['cv']:.2f}")
PY
}

CASES=${CASES:-gpu_aware memcpy}
has() { [[ " $CASES " == *" $1 "* ]]; }
if has gpu_aware; then
export OMPI_MCA_btl_smcuda_cuda_ipc_verbose=100
run alone --suite mpi-gpu --only mpi.gpu_aware.bandwidth --sizes 8,16M --time-budget 0.05
run alone-small --suite mpi-gpu --only mpi.gpu_aware.bandwidth --sizes 8 --time-budget 0.05
run after-ipc --suite mpi-gpu --only 'ipc.bandwidth,mpi.gpu_aware.bandwidth' --sizes 8,16M --time-budget 0.05
run after-allgather --suite mpi-gpu --only 'mpi.gpu_aware.allgather,mpi.gpu_aware.bandwidth' --sizes 8,16M --time-budget 0.05
run alone-unbound --suite mpi-gpu --only mpi.gpu_aware.bandwidth --sizes 8,16M --time-budget 0.05 \
  --launcher "mpirun --allow-run-as-root -n 2 --bind-to none"
unset OMPI_MCA_btl_smcuda_cuda_ipc_verbose
fi
if has memcpy; then
  for i in 1 2 3; do
    run memcpy-$i --suite host --only 'host.memcpy,reference.host_memcpy' --sizes 4K,1M,16M
  done
fi
verdicts() {  # the confirmation pass's verdicts of a run, and its unstable points
  python3 - "$W/$1/results.jsonl" <<'PY'
import json, sys, collections
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
res = [r for r in recs if r.get("type") == "result"]
v = collections.Counter((r["timing"].get("stability") or {}).get("verdict") for r in res)
print("  verdicts:", dict(v), " warm-up not steady:", sum(not r["timing"]["warmup"]["steady"] for r in res if "warmup" in r["timing"]))
for r in res:
    st = r["timing"].get("stability") or {}
    if st.get("verdict") == "unstable":
        print(f"  unstable: {r['point'][:90]}  {st['passes_median_s']}")
end = [r for r in recs if r.get("type") == "end"]
print("  end:", {k: end[0].get(k) for k in ("status", "results", "errors", "wall_s")} if end else "none")
PY
}
if has default; then
  run default
  verdicts default
fi
if has quick; then
  run quick --quick
  verdicts quick
fi
phase "done"
