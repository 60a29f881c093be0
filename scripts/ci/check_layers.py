#!/usr/bin/env python3
"""Fail on an include that runs up or sideways between the engine's layers, or on a namespace
that is not its folder's.

The engine is layered one way: core knows nothing of GPUs or libraries, backends wrap one library
each, topology discovers the node through the GPU runtime, benchmarks combine them, and the app
wires everything together. An include against that direction is how cycles and hidden coupling
start, so this check reads every `#include "..."` of engine/**/*.{h,cpp,cu,cuh} (tests, fuzzers and
stand-alone tools are programs of their own and may include anything) and prints one line per
include the table below does not allow:

    engine/backends/nccl/x.cu:5: backends/nccl includes benchmarks/collective/y.h (...)

One namespace rule goes with the layers: code written over one library is in that library's
namespace, `commatlas::<library>` (`cuda`, `host`, `mpi`, `nccl`): a backend folder's code, and each
file of the copy and collective layers (see LIBRARY_LAYERS), so code outside it names what it takes
from there (`cuda::GpuBuffer`, `mpi::MpiComm`, `cuda::CopyWorkload`); core, topology, transport,
the benchmarks and the app are `commatlas`. Inside it, code private to a file is in an anonymous
namespace (benchmark registrations too) and a header's internals in `detail`; no other named
namespace. A file that opens another gets one line:

    engine/benchmarks/explicit_copy/x.cu:7: namespace commatlas::cuda in benchmarks (...)

Exit status 0: every include and namespace allowed; 1: at least one is not; 2: bad arguments. It
needs no compiler, so CI runs it before the build.

    python3 scripts/ci/check_layers.py [--engine DIR] [FILE ...]

FILE arguments (paths under the engine folder) limit the check to those files.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

# Which layer may include which, as path prefixes under engine/. A file's layer is the longest
# prefix of LAYERS that its path starts with; "{self}" stands for the file's own layer (a folder
# always includes its own headers). Each allowed edge says why it exists.
LAYERS: dict[str, list[tuple[str, str]]] = {
    # The harness, statistics, records and vocabulary: no GPU, no library, so every build has it
    # and it is unit-tested without hardware.
    "core/": [
        ("core/", "core is the bottom layer"),
    ],
    # Node discovery sits above the GPU runtime: it asks the runtime for devices and peers (the
    # one header that names the CUDA/HIP calls), and nothing below it asks topology anything.
    "topology/": [
        ("core/", "core is below every layer"),
        ("topology/", "its own folder"),
        ("backends/cuda/gpu_runtime.h", "discovery asks the GPU runtime for devices and peers"),
    ],
    # The device runtime every GPU library sits on.
    "backends/cuda/": [
        ("core/", "core is below every layer"),
        ("backends/cuda/", "its own folder"),
        ("backends/host/first_touch.h", "host memory the CPU writes first is placed as host buffers are: from the writer's node"),
    ],
    "backends/host/": [
        ("core/", "core is below every layer"),
        ("backends/host/", "its own folder"),
    ],
    "backends/mpi/": [
        ("core/", "core is below every layer"),
        ("backends/mpi/", "its own folder"),
        ("backends/cuda/", "GPU-aware and staged MPI move device buffers; CUDA IPC handles travel over MPI"),
    ],
    "backends/nccl/": [
        ("core/", "core is below every layer"),
        ("backends/nccl/", "its own folder"),
        ("backends/cuda/", "NCCL runs on CUDA streams and device buffers"),
        ("backends/mpi/", "a rank-per-GPU NCCL job exchanges its unique id over MPI"),
    ],
    # How bytes are copied within a process, whatever does the copying: the GPU copy initiators
    # (copy engine, SM kernels and their shapes: strategies, as nvbandwidth's initiators are), the
    # one GPU copy workload they plug into, and the host's threaded memcpy.
    "copy/": [
        ("core/", "core is below every layer"),
        ("backends/", "an initiator copies through a library wrapper (CUDA/HIP, the host's threads)"),
        ("copy/", "its own folder"),
    ],
    # The collectives written once per library: the MPI and NCCL call tables and the skeleton each
    # collective benchmark, pattern and bare reference loop runs through (buffers, timing, check).
    "collective/": [
        ("core/", "core is below every layer"),
        ("backends/", "a collective calls its library through the wrapper"),
        ("collective/", "its own folder"),
    ],
    # How messages move between ranks, whatever library moves them: the interface the
    # point-to-point protocols and the patterns are written against once, the protocols' one
    # workload, and one file per transport over its library.
    "transport/": [
        ("core/", "core is below every layer"),
        ("backends/", "a transport moves messages through a library wrapper"),
        ("copy/", "CUDA IPC moves a message with a copy initiator (copy engine or SM kernel)"),
        ("transport/", "its own folder"),
    ],
    # One folder per category of the taxonomy: a category uses core, the library wrappers, the node's
    # facts and the mechanism layers (copy, collective, transport), never another category (what two
    # categories share belongs in one of those layers).
    "benchmarks/direct_access/": [],
    "benchmarks/explicit_copy/": [],
    "benchmarks/point_to_point/": [],
    "benchmarks/collective/": [],
    "benchmarks/pattern/": [],
    "benchmarks/reference/": [],
    # The program: registers nothing of its own and wires every layer together.
    "app/": [
        ("", "the program may include any layer"),
    ],
}
BENCHMARK_EDGES = [
    ("core/", "core is below every layer"),
    ("backends/", "benchmarks measure through the library wrappers"),
    ("topology/", "benchmarks read the node's facts"),
    ("copy/", "copy benchmarks run the copy initiators"),
    ("collective/", "collective, pattern and reference benchmarks run the collectives"),
    ("transport/", "point-to-point and pattern benchmarks run over the transports"),
    ("{self}", "its own category"),
]
for _layer in LAYERS:
    if _layer.startswith("benchmarks/"):
        LAYERS[_layer] = BENCHMARK_EDGES

# Programs of their own, not layers of the engine.
SKIPPED = ("tests/", "fuzz/", "tools/")
# Headers CMake generates into the build folder: facts of the build (version, commit, the mpiexec
# found beside MPI), not a layer, so any layer may read them.
GENERATED = ("build_info.h",)
SUFFIXES = (".h", ".cpp", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path: str) -> str | None:
    """The longest LAYERS prefix of an engine-relative path (None: not in any layer)."""
    best = None
    for layer in LAYERS:
        if path.startswith(layer) and (best is None or len(layer) > len(best)):
            best = layer
    return best


def allowed(layer: str, target: str) -> bool:
    for prefix, _why in LAYERS[layer]:
        prefix = layer if prefix == "{self}" else prefix
        if target.startswith(prefix):
            return True
    return False


def describe(layer: str) -> str:
    names = [layer if p == "{self}" else p for p, _ in LAYERS[layer]]
    return ", ".join(n.rstrip("/") or "anything" for n in names)


# The copy and collective layers hold code written over one library each; like a backend's, it is in
# that library's namespace. The library is the one the file's name says (CMake builds *_mpi and *_nccl
# files only with MPI and NCCL), else the layer's: a GPU copy initiator runs on CUDA/HIP, and the one
# host copy is the threaded memcpy.
LIBRARY_LAYERS = {"copy/": "cuda", "collective/": None}
HOST_FILES = ("copy/memcpy_workload.",)


def expected_namespace(rel: str) -> str:
    """The one namespace a file's code is in: the library it is written over (a backend folder, or a
    file of the copy and collective layers), else commatlas."""
    parts = rel.split("/")
    if parts[0] == "backends" and len(parts) > 2:
        return f"commatlas::{parts[1]}"
    layer = parts[0] + "/"
    if layer in LIBRARY_LAYERS and len(parts) == 2:
        stem = parts[1].split(".")[0]
        for library in ("mpi", "nccl"):
            if stem.endswith("_" + library) or f"_{library}_" in stem:
                return f"commatlas::{library}"
        if rel.startswith(HOST_FILES):
            return "commatlas::host"
        if LIBRARY_LAYERS[layer]:
            return f"commatlas::{LIBRARY_LAYERS[layer]}"
    return "commatlas"


NESTED = ("", "detail")  # anonymous, and a header's internals
NAMESPACE = re.compile(r"\bnamespace\s+((?:\w+\s*::\s*)*\w+)?\s*\{|[{}]")


def code_only(text: str) -> str:
    """The text with comments and string and character literals blanked (line numbers kept)."""
    return re.sub(r'//[^\n]*|/\*.*?\*/|R"(\w*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                  lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)


def check_namespaces(rel: str, text: str) -> list[str]:
    want = expected_namespace(rel)
    where = rel.split("/")[0] if want == "commatlas" else "/".join(rel.split("/")[:2])
    problems = []
    stack: list[str | None] = []  # a namespace's name per open brace, None for any other brace
    code = code_only(text)
    for m in NAMESPACE.finditer(code):
        token = m.group(0)
        if token == "}":
            if stack:
                stack.pop()
            continue
        if token == "{":
            stack.append(None)
            continue
        name = re.sub(r"\s+", "", m.group(1) or "")
        outer = [n for n in stack if n is not None]
        line = code.count("\n", 0, m.start()) + 1
        if not outer and name != want:
            problems.append(f"engine/{rel}:{line}: namespace {name or '(anonymous)'} in {where} "
                            f"(its code is in {want}: the namespace rule in {Path(__file__).name})")
        elif outer and name not in NESTED:
            problems.append(f"engine/{rel}:{line}: namespace {name} inside {'::'.join(outer)} "
                            "(inside its namespace a file has only an anonymous one and detail)")
        stack.append(name)
    return problems


def check_file(engine: Path, rel: str) -> list[str]:
    layer = layer_of(rel)
    if layer is None:
        return [f"engine/{rel}:1: {rel} is in no layer (add its folder to LAYERS in {Path(__file__).name})"]
    text = (engine / rel).read_text(encoding="utf-8", errors="replace")
    problems = check_namespaces(rel, text)
    for number, line in enumerate(text.splitlines(), 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        target = m.group(1)
        if "/" not in target and (engine / rel).with_name(target).exists():
            # A header beside the file: the same folder, so the same layer.
            target = str(Path(rel).with_name(target))
        if layer == "app/" or target in GENERATED:
            continue
        if layer_of(target) is None:
            problems.append(f"engine/{rel}:{number}: {layer.rstrip('/')} includes {target} "
                            "(not a path under engine/: write includes from engine/ so the layer shows)")
        elif not allowed(layer, target):
            problems.append(f"engine/{rel}:{number}: {layer.rstrip('/')} includes {target} "
                            f"({layer.rstrip('/')} may include only {describe(layer)})")
    return problems


def engine_files(engine: Path) -> list[str]:
    files = []
    for path in sorted(engine.rglob("*")):
        rel = path.relative_to(engine).as_posix()
        if path.is_file() and path.suffix in SUFFIXES and not rel.startswith(SKIPPED):
            files.append(rel)
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", type=Path, default=Path(__file__).resolve().parents[2] / "engine",
                        help="the engine source folder (default: this checkout's engine/)")
    parser.add_argument("files", nargs="*", help="engine-relative files to check (default: all)")
    args = parser.parse_args(argv)
    if not args.engine.is_dir():
        print(f"check_layers: {args.engine} is not a folder", file=sys.stderr)
        return 2
    files = args.files or engine_files(args.engine)
    missing = [f for f in files if not (args.engine / f).is_file()]
    if missing:
        print(f"check_layers: no such file under {args.engine}: {', '.join(missing)}", file=sys.stderr)
        return 2
    problems = [p for rel in files if not rel.startswith(SKIPPED) for p in check_file(args.engine, rel)]
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
