"""How MPI phases are started: `mpiexec` with the flags its implementation needs, or the
user's own launcher line (`srun -N 2 --ntasks-per-node 4`) used verbatim on clusters."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from commatlas.errors import UsageError


class MpiImplementation(Enum):
    OPEN_MPI = "openmpi"
    MPICH = "mpich"  # also MPICH derivatives on Hydra: Intel MPI, MVAPICH, Cray's mpiexec
    UNKNOWN = "unknown"


def detect_implementation(version_text: str) -> MpiImplementation:
    """Reads `mpiexec --version`: Open MPI prints "(OpenRTE)" (4.x) or "(Open MPI)" (5.x);
    Hydra-based launchers print "HYDRA build details" or name Intel MPI."""
    text = version_text.lower()
    if "openrte" in text or "open mpi" in text or "open-mpi" in text:
        return MpiImplementation.OPEN_MPI
    if "hydra" in text or "mpich" in text or "intel(r) mpi" in text:
        return MpiImplementation.MPICH
    return MpiImplementation.UNKNOWN


@dataclass(frozen=True)
class Launcher:
    kind: str             # "openmpi", "mpich", "unknown" (mpiexec) or "custom"
    prefix: tuple[str, ...]
    ranks: int | None     # None: the custom launcher line decides
    notes: tuple[str, ...] = field(default=())

    def command(self, program: list[str], environment: dict[str, str] | None = None) -> list[str]:
        return [*self.prefix, *self.environment_flags(environment or {}), *program]

    def environment_flags(self, environment: dict[str, str]) -> list[str]:
        """Flags that carry variables set for the launcher on to every rank: Open MPI passes only
        what -x names; Hydra (MPICH) takes -genv; srun and unknown launchers pass the environment."""
        flags: list[str] = []
        for name, value in environment.items():
            if self.kind == MpiImplementation.OPEN_MPI.value:
                flags += ["-x", name]
            elif self.kind == MpiImplementation.MPICH.value:
                flags += ["-genv", name, value]
        return flags

    def describe(self) -> dict[str, object]:
        return {"kind": self.kind, "command": list(self.prefix), "ranks": self.ranks}


def physical_cores() -> int:
    """Cores this process may use, counting hyperthread siblings once: Open MPI's default
    slot count is the core count, so more ranks than cores needs --oversubscribe."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1
    cores = set()
    for cpu in cpus:
        topology = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            package = (topology / "physical_package_id").read_text().strip()
            core = (topology / "core_id").read_text().strip()
        except OSError:
            return len(cpus)
        cores.add((package, core))
    return max(1, len(cores))


# Ranks per core beyond which a local MPI job measures only the scheduler (and beyond which, in
# the thousands, mpiexec itself fails on the system's pipe and process limits and may hang).
MAX_RANKS_PER_CORE = 16
# Descriptors mpiexec holds per local rank (stdin, stdout, stderr pipes, both ends, and a socket).
FDS_PER_RANK = 8


def open_file_limit() -> int | None:
    try:
        import resource  # deliberate: POSIX only; elsewhere the limit is unknown
    except ImportError:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def check_rank_capacity(ranks: int, cores: int, open_files: int | None) -> None:
    """Refuses up front a rank count this machine plainly cannot host under a local mpiexec."""
    limit = MAX_RANKS_PER_CORE * cores
    if ranks > limit:
        raise UsageError(f"--ranks {ranks} is more than this machine can host: {cores} core{'s' if cores > 1 else ''} "
                         f"take at most {limit} ranks ({MAX_RANKS_PER_CORE} per core, sharing cores through "
                         f"--oversubscribe); for more ranks, use more nodes with --launcher")
    if open_files is not None and ranks * FDS_PER_RANK > open_files:
        raise UsageError(f"--ranks {ranks} is more than mpiexec can start here: the open-file limit "
                         f"(ulimit -n {open_files}) allows about {open_files // FDS_PER_RANK} ranks")


def cores_per_rank(ranks: int, cores: int) -> int | None:
    """Each rank's share of this node's cores, or None where there are more ranks than cores.

    A GPU rank is not one thread: NCCL's proxy service threads, NVSHMEM's proxy and the CUDA
    runtime's own threads run beside the main one, on the cores the rank is bound to. Bound to
    one core each (Open MPI's default at 2 ranks), they take turns with it: on 2x H100 NCCL's
    first allgather and alltoall took 1.30 s and 1.20 s to connect bound to a core, 0.49 s and
    0.17 s unbound (results/nvidia-h100-x2/host-mpi-context). So each rank gets a block of
    cores of its own, as a GPU job is usually placed; at one rank per core that is one core."""
    return cores // ranks if ranks <= cores else None


def mpiexec_launcher(ranks: int, version_text: str, cores: int, is_root: bool, mpiexec: str = "mpiexec") -> Launcher:
    """Every library places the ranks alike, in its own words (Open MPI binds each to a core at
    2 ranks and Hydra binds none when not told): each rank bound to its block of cores
    (cores_per_rank); unbound where the ranks outnumber the cores and must share them."""
    implementation = detect_implementation(version_text)
    share = cores_per_rank(ranks, cores)
    prefix = [mpiexec]
    notes = []
    if implementation is MpiImplementation.OPEN_MPI:
        if is_root:
            # Open MPI refuses to start as root unless told; containers often run as root.
            prefix.append("--allow-run-as-root")
        if share is None:
            prefix.append("--oversubscribe")
            notes.append(f"{ranks} ranks on {cores} cores: ranks share cores, timings are pessimistic")
        elif share == 1:
            prefix += ["--map-by", "core", "--bind-to", "core"]
        else:
            prefix += ["--map-by", f"slot:PE={share}", "--bind-to", "core"]
    elif implementation is MpiImplementation.MPICH and share is not None:
        prefix += ["-bind-to", "core" if share == 1 else f"core:{share}"]
    prefix += ["-n", str(ranks)]
    return Launcher(implementation.value, tuple(prefix), ranks, tuple(notes))


def custom_launcher(text: str) -> Launcher:
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise UsageError(f"--launcher '{text}' cannot be parsed: {e}") from None
    if not words:
        raise UsageError("--launcher is empty")
    if shutil.which(words[0]) is None:
        raise UsageError(f"--launcher: '{words[0]}' is not a program on PATH")
    return Launcher("custom", tuple(words), None)


def mpiexec_version(mpiexec: str) -> str:
    try:
        done = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise UsageError(f"cannot run '{mpiexec} --version': {e}") from None
    return done.stdout + done.stderr


def find_launcher(ranks: int, launcher_text: str | None, mpiexec: str | None = None) -> Launcher:
    """The launcher for an MPI phase of `ranks` ranks; raises UsageError when there is none.
    `mpiexec`: this one (a library's own, commatlas.run.mpi_libraries) instead of the one on PATH."""
    if launcher_text:
        return custom_launcher(launcher_text)
    mpiexec = mpiexec or shutil.which("mpiexec") or shutil.which("mpirun")
    if mpiexec is None:
        raise UsageError("no mpiexec or mpirun on PATH: install an MPI, or give --launcher")
    cores = physical_cores()
    check_rank_capacity(ranks, cores, open_file_limit())
    return mpiexec_launcher(ranks, mpiexec_version(mpiexec), cores, os.geteuid() == 0, mpiexec)
