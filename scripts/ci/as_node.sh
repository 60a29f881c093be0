#!/bin/sh
# Runs one MPI rank as if on its own node: in a UTS namespace of its own with the host name
# "${COMMATLAS_NODE_PREFIX:-node}N", N = the rank's node when ranks are placed in blocks over
# COMMATLAS_NODES (default 2) nodes. Used as the end of a launcher line, to test multi-node logic
# on one machine (as root: unshare needs CAP_SYS_ADMIN):
#   mpiexec -n 4 --mca btl tcp,self scripts/ci/as_node.sh commatlas-engine run --mpi ...
set -eu
rank="${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${SLURM_PROCID:-0}}}"
size="${OMPI_COMM_WORLD_SIZE:-${SLURM_NTASKS:-1}}"
nodes="${COMMATLAS_NODES:-2}"
per_node=$(( (size + nodes - 1) / nodes ))
node=$(( rank / per_node ))
name="${COMMATLAS_NODE_PREFIX:-node}${node}"
# Tests that pause a rank (SIGSTOP) find it here: unshare and sh exec, so this pid is the engine's.
if [ -n "${COMMATLAS_PID_DIR:-}" ]; then echo $$ > "$COMMATLAS_PID_DIR/rank$rank.pid"; fi
exec unshare --uts sh -c 'hostname "$0" && exec "$@"' "$name" "$@"
