# shellcheck shell=bash
# Sourced by the device scripts that time launches bare: `timed LABEL COMMAND...` runs the command
# (at most 60 s, its output to $W/last.out) and prints one line: the label, the seconds it took,
# its exit status. W must name a scratch folder.
now() { date +%s.%N; }
timed() {
  local label=$1 t0 rc; shift
  t0=$(now); timeout 60 "$@" > "$W/last.out" 2>&1; rc=$?
  python3 -c "import sys; print(f'{sys.argv[3]:<48} {float(sys.argv[2]) - float(sys.argv[1]):6.3f} s rc={sys.argv[4]}')" \
    "$t0" "$(now)" "$label" "$rc"
}
