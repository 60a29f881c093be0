#!/usr/bin/env bash
# Whether host-buffer MPI's per-job states belong to Open MPI's CUDA-aware shared-memory transport,
# in one device call on a 2-GPU kind: ROUNDS rounds, each one fresh `commatlas run` job of host-buffer
# ping-pong, bandwidth and bibw at 8 B and 4 KiB per BTL setting (unset: the library's choice;
# self,vader; self,smcuda), interleaved, under the CUDA-aware Open MPI carried in .device-carry/.
# On 2x H200 the same default run's mpi.bibw at 4 KiB read 3.2-3.8 GB/s in some jobs and 4.9-6.5 in
# others (results/nvidia-h200-x2/identical-33, osu-copy-level-33), with the CPU pair alike.
# Records land in $OUT/host-mpi-btl-states.tar.gz (work_folder.sh packs them).
# Usage (repository root, .device-carry carried): OUT=/some/dir [ROUNDS=6] bash scripts/device/host_mpi_btl_states.sh
set -uo pipefail
OUT=${OUT:?set OUT to the folder that receives logs and records}
ROUNDS=${ROUNDS:-6}
source scripts/device/work_folder.sh host_mpi_btl_states
source scripts/device/build_engine.sh build-btl "$W/build.log" || exit 1
ompi_info --parsable 2>/dev/null | grep -E "^mca:(btl|pml):[a-z]+:version" | cut -d: -f2,3 | sort -u | tr '\n' ' '
echo
for round in $(seq "$ROUNDS"); do
  for btl in unset self,vader self,smcuda; do
    name=round-$round-${btl/,/-}
    echo "$( [ "$btl" = unset ] || echo "OMPI_MCA_btl=$btl ")commatlas run --out $name --only mpi.pingpong,mpi.bandwidth,mpi.bibw --sizes 8,4K" \
      >> "$W/commands.txt"
    if [ "$btl" = unset ]; then
      timeout 60 python3 -m commatlas run --out "$W/$name" --only mpi.pingpong,mpi.bandwidth,mpi.bibw --sizes 8,4K \
        > "$W/$name.log" 2>&1
    else
      OMPI_MCA_btl=$btl timeout 60 python3 -m commatlas run --out "$W/$name" --only mpi.pingpong,mpi.bandwidth,mpi.bibw \
        --sizes 8,4K > "$W/$name.log" 2>&1
    fi
    rc=$?
    python3 - "$W/$name/results.jsonl" "$name" "$rc" <<'PY'
import json, sys
figures = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") == "result":
        value = f"{r['latency_us']:.3g} us" if r["benchmark"] == "mpi.pingpong" else f"{r['bandwidth_gbps']:.3g} GB/s"
        figures.append(f"{r['benchmark'][4:]} {r['bytes']}: {value}")
print(f"{sys.argv[2]:24s} rc={sys.argv[3]}  " + ", ".join(sorted(figures)))
PY
  done
done
