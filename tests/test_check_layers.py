"""The layering check (scripts/ci/check_layers.py): the engine's includes run one way today, and
the check catches an include planted against the direction, upward or sideways; every file's
namespace is its folder's (commatlas::<backend> in a backend, commatlas elsewhere), and the check
catches one that is not."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHECK = REPO / "scripts" / "ci" / "check_layers.py"
ENGINE = REPO / "engine"


def check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(CHECK), *args], capture_output=True, text=True, check=False)


def plant(engine: Path, rel: str, *includes: str) -> None:
    path = engine / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f'#include "{i}"\n' for i in includes) + "int x;\n")


def test_the_engine_includes_run_one_way() -> None:
    done = check()
    assert done.returncode == 0 and done.stdout == "", done.stdout + done.stderr


def test_an_include_planted_in_a_copy_of_the_engine_is_caught(tmp_path: Path) -> None:
    engine = tmp_path / "engine"
    shutil.copytree(ENGINE, engine, ignore=shutil.ignore_patterns("tests", "fuzz", "tools"))
    target = engine / "backends" / "nccl" / "nccl_job.cu"
    lines = target.read_text().splitlines(keepends=True)
    lines.insert(1, '#include "topology/topology.h"\n')  # what nccl_job.cu once included
    target.write_text("".join(lines))

    done = check("--engine", str(engine))
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "engine/backends/nccl/nccl_job.cu:2: backends/nccl includes topology/topology.h "
        "(backends/nccl may include only core, backends/nccl, backends/cuda, backends/mpi)"]


def test_upward_and_sideways_includes_each_get_a_line(tmp_path: Path) -> None:
    engine = tmp_path / "engine"
    plant(engine, "core/a.h", "core/b.h", "backends/cuda/memory.h")                  # upward from core
    plant(engine, "backends/host/h.cpp", "backends/host/h.h", "backends/mpi/m.h")    # sideways backend
    plant(engine, "backends/nccl/n.cu", "backends/mpi/m.h", "backends/cuda/c.h")     # allowed edges
    plant(engine, "topology/t.cu", "backends/cuda/gpu_runtime.h", "backends/cuda/memory.h")
    plant(engine, "benchmarks/pattern/p.cu", "benchmarks/pattern/q.h", "topology/topology.h",
          "benchmarks/point_to_point/ipc.h")                                          # sideways category
    plant(engine, "transport/x.cu", "backends/mpi/m.h", "benchmarks/pattern/q.h")    # upward from transport
    plant(engine, "benchmarks/point_to_point/p.cpp", "transport/transport.h")       # over the transports
    plant(engine, "benchmarks/explicit_copy/c.cu", "copy/copy_initiator.h", "collective/collective_mpi.h")
    plant(engine, "transport/i.cu", "copy/copy_initiator.h")                          # IPC copies with an initiator
    plant(engine, "copy/w.cu", "backends/cuda/memory.h", "transport/transport.h")     # upward from copy
    plant(engine, "collective/k.cpp", "backends/mpi/m.h", "copy/copy_workload.h")     # sideways between layers
    plant(engine, "app/main.cpp", "benchmarks/pattern/q.h", "build_info.h")          # the app: anything
    plant(engine, "tests/t.cpp", "benchmarks/pattern/q.h")                            # tests: not checked

    done = check("--engine", str(engine))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "engine/backends/host/h.cpp:2: backends/host includes backends/mpi/m.h "
        "(backends/host may include only core, backends/host)",
        "engine/benchmarks/pattern/p.cu:3: benchmarks/pattern includes benchmarks/point_to_point/ipc.h "
        "(benchmarks/pattern may include only core, backends, topology, copy, collective, transport, "
        "benchmarks/pattern)",
        "engine/collective/k.cpp:2: collective includes copy/copy_workload.h "
        "(collective may include only core, backends, collective)",
        "engine/copy/w.cu:2: copy includes transport/transport.h (copy may include only core, backends, copy)",
        "engine/core/a.h:2: core includes backends/cuda/memory.h (core may include only core)",
        "engine/topology/t.cu:2: topology includes backends/cuda/memory.h "
        "(topology may include only core, topology, backends/cuda/gpu_runtime.h)",
        "engine/transport/x.cu:2: transport includes benchmarks/pattern/q.h "
        "(transport may include only core, backends, copy, transport)",
    ]

    # A list of files limits the check to them.
    done = check("--engine", str(engine), "backends/nccl/n.cu", "core/a.h")
    assert done.returncode == 1 and len(done.stdout.splitlines()) == 1 and "core/a.h:2:" in done.stdout


def plant_code(engine: Path, rel: str, code: str) -> None:
    path = engine / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(code)


def test_a_namespace_not_the_folders_gets_a_line(tmp_path: Path) -> None:
    engine = tmp_path / "engine"
    plant_code(engine, "backends/cuda/ok.h", "namespace commatlas::cuda {\nnamespace detail {}\n}\n")
    plant_code(engine, "backends/mpi/m.cpp", "namespace commatlas {\nint x;\n}  // namespace commatlas\n")
    plant_code(engine, "benchmarks/explicit_copy/b.cu",  # a benchmark inside a backend's namespace
               '#include "backends/cuda/ok.h"\n\nnamespace commatlas::cuda {\nnamespace {\n}\n}\n')
    plant_code(engine, "transport/t.h", "namespace commatlas::gi {\n}\n")
    plant_code(engine, "core/c.h",  # comments and strings are not code; a nested named one is refused
               '// namespace old {\nnamespace commatlas {\nconst char* s = "namespace x {";\n'
               "namespace {\nstruct A { int f() { return '{'; } };\n}\nnamespace util {\n}\n}\n")
    plant_code(engine, "topology/t.cpp", "namespace {\nint y;\n}\nnamespace commatlas {\n}\n")
    plant_code(engine, "app/main.cpp", "namespace commatlas {\nnamespace {\n}\n}\nint main() {}\n")
    plant_code(engine, "tests/t.cpp", "namespace commatlas::cuda {\n}\n")  # tests: not checked

    done = check("--engine", str(engine))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "engine/backends/mpi/m.cpp:1: namespace commatlas in backends/mpi "
        "(its code is in commatlas::mpi: the namespace rule in check_layers.py)",
        "engine/benchmarks/explicit_copy/b.cu:3: namespace commatlas::cuda in benchmarks "
        "(its code is in commatlas: the namespace rule in check_layers.py)",
        "engine/core/c.h:7: namespace util inside commatlas "
        "(inside its namespace a file has only an anonymous one and detail)",
        "engine/topology/t.cpp:1: namespace (anonymous) in topology "
        "(its code is in commatlas: the namespace rule in check_layers.py)",
        "engine/transport/t.h:1: namespace commatlas::gi in transport "
        "(its code is in commatlas: the namespace rule in check_layers.py)",
    ]


def test_a_benchmark_moved_back_into_a_backends_namespace_is_caught(tmp_path: Path) -> None:
    engine = tmp_path / "engine"
    shutil.copytree(ENGINE, engine, ignore=shutil.ignore_patterns("tests", "fuzz", "tools"))
    target = engine / "benchmarks" / "explicit_copy" / "gpu_prefetch.cu"
    target.write_text(target.read_text().replace("namespace commatlas {", "namespace commatlas::cuda {"))
    done = check("--engine", str(engine))
    assert done.returncode == 1, done.stdout + done.stderr
    assert [line.split(":")[0] for line in done.stdout.splitlines()] == [
        "engine/benchmarks/explicit_copy/gpu_prefetch.cu"]


def test_bad_arguments_are_one_line_and_status_2(tmp_path: Path) -> None:
    done = check("--engine", str(tmp_path / "nowhere"))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    done = check("--engine", str(ENGINE), "core/no_such_file.h")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
