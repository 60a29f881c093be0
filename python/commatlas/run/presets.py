"""Tuning presets (`commatlas run --tune nccl|mpi|glibc`): the knobs people actually turn, swept one at
a time, every other knob of the preset left unset: 1 + sum(values) passes instead of the product.
Every record of a preset run carries every knob as params `env.NAME` ("(unset)" when not set), so
the baseline of each point is the pass with every knob unset (commatlas.analysis.tuning reads it).
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable

from commatlas.errors import UsageError
from commatlas.io.records import UNSET
from commatlas.run.launcher import detect_implementation, mpiexec_version
from commatlas.run.sweep import EnvSweep, Pass

# Longer than this, a preset run is refused before it starts (narrow it with --only/--sizes/--quick).
MAX_PRESET_S = 3600.0


@dataclass(frozen=True)
class Knob:
    name: str
    values: tuple[str, ...]  # settings tried besides leaving it unset
    why: str


@dataclass(frozen=True)
class Preset:
    name: str
    knobs: tuple[Knob, ...]
    only: tuple[str, ...]  # what it measures when the user selects nothing
    note: str = ""

    def passes(self, repeat: int = 1) -> list[Pass]:
        """The baseline (every knob unset), then each knob's values alone."""
        names = [k.name for k in self.knobs]
        unset = {n: UNSET for n in names}
        settings = [dict(unset)] + [{**unset, k.name: v} for k in self.knobs for v in k.values]
        return [Pass(r if repeat > 1 else None, tuple((n, s[n]) for n in names))
                for r in range(1, repeat + 1) for s in settings]

    def sweeps(self) -> tuple[EnvSweep, ...]:
        return tuple(EnvSweep(k.name, (UNSET, *k.values)) for k in self.knobs)


def nccl_preset() -> Preset:
    return Preset("nccl", (
        Knob("NCCL_PROTO", ("LL", "LL128", "Simple"), "protocol: LL wins small messages, Simple large ones"),
        Knob("NCCL_ALGO", ("Ring", "Tree"), "collective algorithm"),
        Knob("NCCL_NCHANNELS_PER_PEER", ("4", "32"), "channels per peer of send/recv (3.5x for p2p on LUMI at 32)"),
        Knob("NCCL_MIN_NCHANNELS", ("4", "32"), "lower bound of channels (SMs) a collective uses"),
        Knob("NCCL_P2P_LEVEL", ("LOC", "NVL", "SYS"), "how far apart two GPUs may be for peer-to-peer (LOC: never)"),
    ), ("nccl.*", "pattern.*.nccl"), "needs 2+ GPUs (NCCL with one rank per GPU)")


def ompi_components(text: str) -> dict[str, set[str]]:
    """`ompi_info --parsable` lines 'mca:btl:vader:version:...' -> {'btl': {'vader', ...}}."""
    found: dict[str, set[str]] = defaultdict(set)
    for line in text.splitlines():
        m = re.match(r"mca:([a-z_]+):([A-Za-z0-9_]+):version:", line)
        if m:
            found[m.group(1)].add(m.group(2))
    return found


def mpi_knobs(implementation: str, ompi_info_text: str = "") -> tuple[Knob, ...]:
    """The transport choices the MPI library found offers."""
    if implementation == "openmpi":
        comps = ompi_components(ompi_info_text)
        btl = comps.get("btl", set())
        shared = [c for c in ("vader", "sm", "smcuda") if c in btl]
        btl_values = tuple(f"self,{c}" for c in shared) + (("self,tcp",) if "tcp" in btl else ())
        knobs = []
        if btl_values:
            knobs.append(Knob("OMPI_MCA_btl", btl_values, "byte transfer layer: shared memory vs TCP loopback"))
        pml = tuple(c for c in ("ob1", "ucx") if c in comps.get("pml", set()))
        if len(pml) > 1:
            knobs.append(Knob("OMPI_MCA_pml", pml, "point-to-point layer: ob1 (BTLs) or UCX"))
        return tuple(knobs)
    if implementation == "mpich":
        return (
            Knob("MPIR_CVAR_NOLOCAL", ("1",), "send ranks on one node through the network module, not shared memory"),
            Knob("MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM", ("recursive_doubling", "ring"), "allreduce algorithm"),
            Knob("MPIR_CVAR_CH4_SHM_POSIX_EAGER", ("iqueue", "fbox"), "shared-memory eager transport"),
        )
    return ()


def detect_mpi() -> tuple[str, str]:
    """(implementation, ompi_info --parsable output) of the MPI on PATH; ("", "") without one."""
    mpiexec = shutil.which("mpiexec") or shutil.which("mpirun")
    if not mpiexec:
        return "", ""
    implementation = detect_implementation(mpiexec_version(mpiexec)).value
    text = ""
    if implementation == "openmpi" and shutil.which("ompi_info"):
        try:
            text = subprocess.run(["ompi_info", "--parsable"], capture_output=True, text=True, timeout=30,
                                  check=False).stdout
        except (OSError, subprocess.TimeoutExpired):
            text = ""
    return implementation, text


def mpi_preset(implementation: str | None = None, ompi_info_text: str | None = None) -> Preset:
    if implementation is None:
        implementation, ompi_info_text = detect_mpi()
    knobs = mpi_knobs(implementation, ompi_info_text or "")
    note = f"{implementation or 'no MPI found'}" + ("" if knobs else ": no transport knobs known for it")
    return Preset("mpi", knobs, ("mpi.*", "pattern.*.mpi"), note)


# glibc's x86-64 memcpy picks its stores by size: vector stores, then `rep movsb` from
# x86_rep_movsb_threshold (2 KiB with AVX2 by default), then non-temporal stores, which bypass the
# caches, from x86_non_temporal_threshold (3/4 of a thread's share of the L3 by default). Each value
# below moves one threshold; a value past every size turns that kind of store off. On 1x H200 the
# non-temporal threshold past every size made a one-thread 256 MiB copy 1.46x slower over three jobs
# a setting, and no setting's gain at 16 KiB-16 MiB held over jobs
# (results/nvidia-h200-x1/glibc-tunables-32).
GLIBC_MEMCPY = Knob("GLIBC_TUNABLES", (
    "glibc.cpu.x86_non_temporal_threshold=0xffffffffff",
    "glibc.cpu.x86_non_temporal_threshold=0x100000",
    "glibc.cpu.x86_rep_movsb_threshold=0xffffffff",
), "glibc's memcpy on x86-64: non-temporal stores never, or from 1 MiB; `rep movsb` never")


def glibc_preset(machine: str | None = None, libc: str | None = None) -> Preset:
    """glibc's memcpy thresholds, for host copies: the tunables exist on x86-64 glibc only."""
    machine = platform.machine() if machine is None else machine
    libc = platform.libc_ver()[0] if libc is None else libc
    if machine not in ("x86_64", "AMD64") or libc != "glibc":
        where = f"{machine or 'this CPU'} with {libc or 'a C library other than glibc'}"
        return Preset("glibc", (), ("host.memcpy",), f"{where}: glibc's memcpy tunables are x86-64 glibc's")
    return Preset("glibc", (GLIBC_MEMCPY,), ("host.memcpy",), "host copies (memcpy) in every engine process")


PRESETS = {"nccl": nccl_preset, "mpi": mpi_preset, "glibc": glibc_preset}


def preset(name: str) -> Preset:
    if name not in PRESETS:
        raise UsageError(f"--tune {name!r}: unknown preset (use {', '.join(PRESETS)})")
    chosen = PRESETS[name]()
    if not chosen.knobs:
        raise UsageError(f"--tune {name}: {chosen.note}")
    return chosen


def estimate_seconds(passes: int, benchmarks: int, sizes_per_benchmark: int, budget_s: float) -> float:
    """Rough: every point costs its budget plus warm-up and setup; every pass starts the engine
    (and an MPI job) again."""
    per_point = budget_s * 1.3 + 0.1
    return passes * (benchmarks * sizes_per_benchmark * per_point + 3.0)


def format_duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def presets_table(presets: Iterable[Preset]) -> list[dict[str, Any]]:
    """`commatlas list --tune`: each preset's knobs and values, and its pass count."""
    return [{"preset": p.name, "note": p.note, "passes": len(p.passes()), "selects": list(p.only),
             "knobs": [{"name": k.name, "values": [UNSET, *k.values], "why": k.why} for k in p.knobs]}
            for p in presets]
