"""Several MPI libraries in one run (`commatlas run --mpi openmpi,mpich`): which engine was built
against which library, and which launcher starts it.

An engine is built against one MPI (CMake's FindMPI, or the wrapper named by -DMPI_C_COMPILER);
`scripts/build_mpi_engines.sh` builds one per library found. The engine reads its library from
MPI_Get_library_version (engine/core/mpi_library.cpp) and says it in `info`
(backends.mpi.library, library_name, library_release), with the mpiexec CMake found beside it.
Here a name given to --mpi is matched against those answers; a path names an engine directly.

Where engines are looked for, in order: the default engine (COMMATLAS_ENGINE or the installed
one), $COMMATLAS_MPI_ENGINES (engines or folders holding one, separated by ':'), and
`mpi/*/commatlas-engine` beside the default engine."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from commatlas.analysis import osu
from commatlas.errors import UsageError
from commatlas.io.engine import Engine, backend_built, normalise_mpi_name
from commatlas.run.launcher import MpiImplementation, detect_implementation, mpiexec_version

ENGINES_ENV = "COMMATLAS_MPI_ENGINES"
ENGINE_NAME = "commatlas-engine"
# Launcher names per library family, most specific first (Debian installs both with suffixes).
LAUNCHER_NAMES = {
    "openmpi": ("mpiexec.openmpi", "mpirun.openmpi", "mpiexec", "mpirun"),
    "mpich": ("mpiexec.mpich", "mpirun.mpich", "mpiexec.hydra", "mpiexec", "mpirun"),
}
# Libraries whose mpiexec is Hydra's (MPICH's): MVAPICH, Cray MPICH (srun in practice), Intel MPI.
FAMILY = {"openmpi": MpiImplementation.OPEN_MPI, "mpich": MpiImplementation.MPICH,
          "mvapich": MpiImplementation.MPICH, "mvapich-plus": MpiImplementation.MPICH,
          "cray-mpich": MpiImplementation.MPICH, "intel-mpi": MpiImplementation.MPICH}


@dataclass(frozen=True)
class MpiBuild:
    """One engine and the MPI library it was built against."""

    engine: Engine
    library: str   # "openmpi", "mpich", ... (engine/core/mpi_library.h ids)
    name: str      # "Open MPI"
    version: str   # "4.1.4"
    mpiexec: str   # the launcher CMake found with it ("" when none)
    gpu_context: bool = False  # its ranks hold a CUDA context from their start (osu.ranks_hold_gpu_context)

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}".strip()


def build_of(engine: Engine, info: dict[str, Any] | None = None) -> MpiBuild | None:
    """The engine's MPI library, from its own `info`; None when it has no MPI backend."""
    info = info if info is not None else engine.info()
    if not backend_built(info, "mpi"):
        return None
    mpi = info["backends"]["mpi"]
    return MpiBuild(engine, str(mpi.get("library") or "unknown"), str(mpi.get("library_name") or ""),
                    str(mpi.get("library_release") or ""), str(mpi.get("mpiexec") or ""),
                    osu.ranks_hold_gpu_context(info))


def _engine_at(path: Path) -> Path | None:
    if path.is_dir():
        for candidate in (path / ENGINE_NAME, path / "engine" / ENGINE_NAME):
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate.resolve()
        return None
    return path.resolve() if path.is_file() and os.access(path, os.X_OK) else None


def candidate_engines(default: Engine) -> list[Path]:
    paths = [default.path.resolve()]
    for item in filter(None, os.environ.get(ENGINES_ENV, "").split(os.pathsep)):
        found = _engine_at(Path(item))
        if found is None:
            raise UsageError(f"{ENGINES_ENV}: {item} is neither a commatlas-engine nor a folder holding one")
        paths.append(found)
    beside = default.path.parent / "mpi"
    if beside.is_dir():
        paths += [p for p in (_engine_at(d) for d in sorted(beside.iterdir())) if p is not None]
    unique: list[Path] = []
    for p in paths:
        if p not in unique:
            unique.append(p)
    return unique


def resolve_libraries(text: str, default: Engine) -> list[MpiBuild]:
    """--mpi's list: each item a library name (openmpi, mpich, mvapich, cray-mpich, or the name
    as the library writes it) or the path of an engine; one engine per library, in the order given."""
    items = [item.strip() for item in text.split(",")]
    if not items or any(not item for item in items):
        raise UsageError(f"--mpi '{text}': give library names or engine paths separated by commas (openmpi,mpich)")
    known: list[MpiBuild] | None = None
    chosen: list[MpiBuild] = []
    for item in items:
        if os.sep in item or Path(item).exists():
            path = _engine_at(Path(item))
            if path is None:
                raise UsageError(f"--mpi: {item} is not a commatlas-engine (nor a folder holding one)")
            build = build_of(Engine(path))
            if build is None:
                raise UsageError(f"--mpi: the engine {item} was built without MPI")
        else:
            if known is None:
                known = [b for b in (build_of(Engine(p)) for p in candidate_engines(default)) if b is not None]
            wanted = normalise_mpi_name(item)
            matches = [b for b in known if b.library == wanted or normalise_mpi_name(b.name) == wanted]
            if not matches:
                have = ", ".join(f"{b.library} ({b.engine.path})" for b in known) or "none"
                raise UsageError(f"--mpi: no engine built against {item} was found (engines with MPI here: {have}); "
                                 f"build one with scripts/build_mpi_engines.sh and list it in {ENGINES_ENV}")
            build = matches[0]
        if any(b.library == build.library and b.version == build.version for b in chosen):
            raise UsageError(f"--mpi names {build.label} twice")
        chosen.append(build)
    return chosen


def launcher_program(build: MpiBuild) -> str:
    """The mpiexec that starts this library's ranks: the one CMake found with it where its
    --version says the same family, else the library's own name on PATH (mpiexec.mpich)."""
    family = FAMILY.get(build.library, MpiImplementation.UNKNOWN)
    tried: list[str] = []
    candidates = ([build.mpiexec] if build.mpiexec else []) + \
        [p for n in LAUNCHER_NAMES.get(build.library, ("mpiexec", "mpirun")) for p in [shutil.which(n)] if p]
    for program in candidates:
        if program in tried or not Path(program).exists():
            continue
        tried.append(program)
        if family is MpiImplementation.UNKNOWN or detect_implementation(mpiexec_version(program)) is family:
            return program
    raise UsageError(f"no launcher for {build.label} found (tried {', '.join(tried) or 'nothing on PATH'}): "
                     f"put its mpiexec on PATH, or run it alone with --launcher")
