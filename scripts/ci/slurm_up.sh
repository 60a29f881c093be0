#!/usr/bin/env bash
# Starts a one-node Slurm (munged + slurmctld + slurmd, Debian's slurm-wlm) as root with its
# configuration and state in a scratch folder; prints the folder. `slurm_down.sh DIR` stops it.
# For CI and tests: a real Slurm on one machine, so `srun --mpi=pmix` launches are tested for real.
set -euo pipefail
[ "$(id -u)" -eq 0 ] || { echo "slurm_up.sh: needs root (slurmd runs jobs as their user)" >&2; exit 2; }
for p in munged slurmctld slurmd srun; do
  command -v "$p" >/dev/null || { echo "slurm_up.sh: $p is not installed (apt-get install slurm-wlm munge)" >&2; exit 2; }
done
dir="${1:-$(mktemp -d /tmp/commatlas-slurm.XXXXXX)}"
mkdir -p "$dir"/{state,spool,log,munge,run}
chmod 700 "$dir/munge"
host="$(hostname -s)"
cpus="$(nproc)"
mem_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))

# munge: a key of our own and a socket in the scratch folder, so a system munged is untouched.
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" -f

cat > "$dir/slurm.conf" <<CONF
ClusterName=commatlas-ci
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=$(( 16817 + RANDOM % 1000 ))
SlurmdPort=$(( 17817 + RANDOM % 1000 ))
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
InactiveLimit=0
KillWait=5
MinJobAge=5
NodeName=$host CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=30 State=UP OverSubscribe=FORCE:4
CONF
: > "$dir/cgroup.conf"
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 1 60); do
  if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
    echo "$dir"
    exit 0
  fi
  sleep 0.5
done
echo "slurm_up.sh: the node did not come up; logs in $dir/log" >&2
sinfo >&2 || true
exit 1
