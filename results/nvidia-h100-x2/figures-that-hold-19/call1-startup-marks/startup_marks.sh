#!/usr/bin/env bash
# TEMPORARY (session 27): where the engine's start and end go, with COMMATLAS_STARTUP_TRACE marks.
set -uo pipefail
source scripts/device/work_folder.sh startup_marks
source scripts/device/build_engine.sh build-trace "$W/build.log" || exit 1
E=$COMMATLAS_ENGINE
export COMMATLAS_STARTUP_TRACE=1
SINGLE=$(python3 - <<'PY'
print("gpu.copy_ce,gpu.copy_ce_fanout,gpu.copy_ce_matrix,gpu.copy_latency,gpu.copy_launch,gpu.copy_sm,gpu.copy_sm_fanout,gpu.copy_sm_matrix,gpu.copy_sm_shapes,gpu.pointer_chase,gpu.prefetch,gpu.stream_copy,gpu.stream_read,gpu.stream_write,gpu_initiated.bandwidth,gpu_initiated.pingpong,host.memcpy,host.pointer_chase,host.pointer_chase_gpu_memory,reference.harness_overhead,reference.host_memcpy")
PY
)
MPIX=(mpiexec --allow-run-as-root --map-by slot:PE=16 --bind-to core -n 2 -x COMMATLAS_STARTUP_TRACE -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NVLS)
t() {  # t NAME CMD...: exec and exit marks around the command, its stderr marks in between
  local name=$1; shift
  echo "== $name"
  echo "[mark] sh $(date +%s.%N | cut -c1-17) exec"
  "$@" > "$W/$name.out" 2> "$W/$name.err"
  local rc=$?
  echo "[mark] sh $(date +%s.%N | cut -c1-17) exited rc=$rc"
  grep "^\[mark\]" "$W/$name.err"
}
for r in 1 2 3; do
  t "vocabulary-$r" "$E" vocabulary
  t "info-$r" "$E" info --json
  t "topo-$r" "$E" topo --json
  t "list-$r" "$E" list --json
  echo "== three side by side $r"; echo "[mark] sh $(date +%s.%N | cut -c1-17) exec"
  "$E" info --json >/dev/null 2>"$W/s-info-$r.err" & "$E" topo --json >/dev/null 2>"$W/s-topo-$r.err" & "$E" list --json >/dev/null 2>"$W/s-list-$r.err" & wait
  echo "[mark] sh $(date +%s.%N | cut -c1-17) all exited"
  t "one-copy-$r" "$E" run --only gpu.copy_ce --sizes 4096 --time-budget 0.01 --progress json --out "$W/one-$r.jsonl"
  t "one-host-$r" "$E" run --only host.memcpy --sizes 4096 --time-budget 0.01 --progress json --out "$W/host-$r.jsonl"
  t "mpi-one-$r" "${MPIX[@]}" "$E" run --mpi --only mpi.pingpong --sizes 8 --time-budget 0.01 --progress json --out "$W/mpi-$r.jsonl"
  t "mpi-nccl-$r" "${MPIX[@]}" "$E" run --mpi --only nccl.pingpong --sizes 8 --time-budget 0.01 --progress json --out "$W/nccl-$r.jsonl"
done
t "single-quick" "$E" run --only "$SINGLE" --progress json --quick --out "$W/single-quick.jsonl"
echo "== commatlas run --quick (marks in engine.log)"
python3 scripts/run_phases.py run --quick --out "$W/quick" > "$W/quick.log" 2>&1
tail -30 "$W/quick.log"
grep "^\[mark\]" "$W/quick/engine.log"
