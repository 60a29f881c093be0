#!/usr/bin/env bash
# Stops what slurm_up.sh DIR started (by the pid files it wrote) and removes DIR.
set -uo pipefail
dir="$1"
for pidfile in "$dir/run/slurmd.pid" "$dir/run/slurmctld.pid" "$dir/munge/munged.pid"; do
  [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
done
sleep 1
rm -rf "$dir"
