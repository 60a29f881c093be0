# shellcheck shell=bash
# Sourced by the device scripts before their first step: what each of them needs around its work.
#   OUT=/some/dir; source scripts/device/work_folder.sh NAME
# - NVLink multicast stays off for NCCL and NVSHMEM (the lent machines' rule, KINDS.md);
# - W is a fresh work folder, and everything the script prints is copied into $W/NAME.log;
# - at exit, however the script ends, what it started with `in_background` is stopped and W is
#   packed into $OUT/NAME.tar.gz ('_' written '-'), without the files `commatlas report` rebuilds:
#   a device call brings back at most 8 files, and the records are what matter.
: "${OUT:?set OUT to the folder that receives logs and records}"
WORK_NAME=${1:?source work_folder.sh with the name of the log and the pack}
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
W=$(mktemp -d)
BACKGROUND=()
exec > >(tee "$W/$WORK_NAME.log") 2>&1

# Runs a command in the background for as long as the script needs it (a sampler).
in_background() {
  "$@" &
  BACKGROUND+=("$!")
}

# Whether a pid is a process that has not ended (a child that ended stays a zombie until reaped).
still_running() {
  local stat
  { stat=$(< "/proc/$1/stat"); } 2>/dev/null || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

# Stops what in_background started, and nothing else: a pid that is 0 or empty never reaches
# kill, since `kill 0` signals the script's whole process group, the script included. A signal
# sent while the child is still turning into its command can be lost (16 of 100 one-line scripts
# kept their sampler), so it is sent again until the process is gone, and KILL ends the wait.
stop_background() {
  local pid
  for pid in "${BACKGROUND[@]}"; do
    for _ in $(seq 20); do
      still_running "$pid" || break
      kill "$pid" 2>/dev/null
      sleep 0.05
    done
    still_running "$pid" && kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  BACKGROUND=()
}

pack_work_folder() {
  stop_background
  tar czf "$OUT/${WORK_NAME//_/-}.tar.gz" -C "$W" --exclude="*/report.html" --exclude="*/answers.json" . 2>/dev/null
}
trap pack_work_folder EXIT
