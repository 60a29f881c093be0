#!/usr/bin/env bash
# Builds and runs the libFuzzer targets (not part of the default build: needs clang with
# libFuzzer). Usage: engine/fuzz/build.sh [RUNS] [OUT_DIR]
#   RUNS: inputs per target (default 200000); OUT_DIR: binaries and logs (default build-fuzz)
# Exit status non-zero when a target crashed; the crashing input is left in OUT_DIR.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
engine="$(dirname "$here")"
runs="${1:-200000}"
out="${2:-build-fuzz}"
mkdir -p "$out"
cxx="${CXX_FUZZ:-$(command -v clang++ || command -v clang++-14)}"
flags=(-std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I "$engine")
# Only the parsing code: the targets need no backend, no registry, no machine.
"$cxx" "${flags[@]}" "$here/fuzz_sizes.cpp" "$engine/core/sizes.cpp" -o "$out/fuzz_sizes"
"$cxx" "${flags[@]}" "$here/fuzz_args.cpp" "$engine/core/arguments.cpp" "$engine/core/sizes.cpp" -o "$out/fuzz_args"
"$cxx" "${flags[@]}" "$here/fuzz_json.cpp" "$engine/core/json_read.cpp" -o "$out/fuzz_json"
status=0
for target in sizes args json; do
  work="$out/corpus-$target"
  mkdir -p "$work"
  cp -n "$here/corpus/$target"/* "$work/" 2>/dev/null || true
  # -max_total_time bounds a slow machine; -runs bounds the count of inputs.
  if ! (cd "$out" && "./fuzz_$target" -runs="$runs" -max_total_time=120 -max_len=256 -timeout=5 \
          "corpus-$target" > "fuzz_$target.log" 2>&1); then
    status=1
  fi
  tail -n 3 "$out/fuzz_$target.log"
done
exit $status
