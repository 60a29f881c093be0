"""Which benchmarks a `commatlas run` selects, and the checks that make a bad selection a
one-line error before anything runs. Suites name what a benchmark needs: "host", "gpu" (one
process: direct access and copies) and "nccl" (one process driving every GPU through NCCL) run in
one process; "mpi" and "mpi-gpu" run under an MPI launcher."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from commatlas.io.engine import (
    KNOWN_SUITES, MPI_SUITES, SUITE_BACKENDS, backend_built, backend_reason, gpu_backend, gpu_count, needs_gpu,
    no_gpu_reason, rank_range_text, short_reason,
)
from commatlas.errors import UsageError

ALL_SUITES = "all"
# Suites only their own name (or --only) selects: not in the default run, not in `--suite all`. The
# torch suite measures PyTorch, which a machine may well not have; "all" means the engine's suites.
OPTIONAL_SUITES = ("torch",)


@dataclass(frozen=True)
class Selection:
    suites: tuple[str, ...] | None  # None: the default for this machine
    only: tuple[str, ...]
    exclude: tuple[str, ...]


def split_list(text: str | None) -> tuple[str, ...]:
    return tuple(item.strip() for item in (text or "").split(",") if item.strip())


def is_mpi_benchmark(benchmark: dict[str, Any]) -> bool:
    return benchmark["suite"] in MPI_SUITES


def default_suites(info: dict[str, Any], topology: dict[str, Any] | None) -> tuple[str, ...]:
    """host always; gpu with GPUs; nccl with GPUs and NCCL; mpi with the MPI backend; mpi-gpu with
    GPUs and MPI."""
    has_gpu = gpu_count(topology) > 0
    has_mpi = backend_built(info, "mpi")
    suites = ["host"]
    if has_gpu:
        suites.append("gpu")
    if has_gpu and backend_built(info, "nccl"):
        suites.append("nccl")
    if has_mpi:
        suites.append("mpi")
    if has_gpu and has_mpi:
        suites.append("mpi-gpu")
    return tuple(suites)


def missing_backends(suite: str, info: dict[str, Any]) -> list[str]:
    needed = (gpu_backend(info) if name == "cuda" else name for name in SUITE_BACKENDS.get(suite, ()))
    return [name for name in needed if not backend_built(info, name)]


def require_mpi(what: str, info: dict[str, Any]) -> None:
    if not backend_built(info, "mpi"):
        raise UsageError(f"{what} needs the MPI backend, which this engine was built without ({backend_reason(info, 'mpi')})")


def why_not_here(suite: str, benchmarks: list[dict[str, Any]], info: dict[str, Any],
                 topology: dict[str, Any] | None) -> str | None:
    """Why this machine cannot run `suite` at all (None: it can, as far as can be told before
    launching): the backend is not built, there is no GPU, or every benchmark says why not."""
    missing = missing_backends(suite, info)
    if missing:
        return f"built without the {missing[0]} backend ({short_reason(backend_reason(info, missing[0]))})"
    if needs_gpu(suite) and gpu_count(topology) == 0:
        return no_gpu_reason(topology)
    members = [b for b in benchmarks if b["suite"] == suite]
    if members and suite not in MPI_SUITES and not any(b.get("runnable") for b in members):
        return common_reason(members)
    return None


def blocked_suites(suites: set[str], benchmarks: list[dict[str, Any]], info: dict[str, Any],
                   topology: dict[str, Any] | None) -> dict[str, str]:
    """The suites among `suites` that cannot run here, each with why (in KNOWN_SUITES order)."""
    order = [*KNOWN_SUITES, *sorted(suites - set(KNOWN_SUITES))]
    found = {suite: why_not_here(suite, benchmarks, info, topology) for suite in order if suite in suites}
    return {suite: why for suite, why in found.items() if why}


def reasons_text(blocked: dict[str, str]) -> str:
    """'gpu, nccl: no GPU on this machine; mpi: built without the mpi backend (...)'."""
    by_reason: dict[str, list[str]] = {}
    for suite, why in blocked.items():
        by_reason.setdefault(why, []).append(suite)
    return "; ".join(f"{', '.join(suites)}: {why}" for why, suites in by_reason.items())


def common_reason(benchmarks: list[dict[str, Any]]) -> str:
    reasons = Counter(short_reason(str(b.get("reason") or "unknown reason")) for b in benchmarks)
    return reasons.most_common(1)[0][0]


def check_suites(suites: tuple[str, ...], benchmarks: list[dict[str, Any]], info: dict[str, Any],
                 topology: dict[str, Any] | None = None) -> None:
    known = {b["suite"] for b in benchmarks}
    for suite in suites:
        if suite == ALL_SUITES:
            continue
        if suite in known:
            # Asked for by name: a suite that cannot run here is a request that cannot be met,
            # however the engine was built.
            why = why_not_here(suite, benchmarks, info, topology)
            if why:
                raise UsageError(f"suite '{suite}' cannot run here: {why}")
            continue
        missing = missing_backends(suite, info)
        if "mpi" in missing:
            require_mpi(f"suite '{suite}'", info)
        if missing:
            raise UsageError(
                f"suite '{suite}' needs the {missing[0]} backend, which this engine was built without "
                f"({backend_reason(info, missing[0])})"
            )
        names = ", ".join(sorted(known))
        raise UsageError(f"unknown suite '{suite}' (this build has: {ALL_SUITES}, {names})")


def check_patterns(patterns: tuple[str, ...], benchmarks: list[dict[str, Any]], info: dict[str, Any]) -> None:
    for pattern in patterns:
        if any(fnmatchcase(b["key"], pattern) for b in benchmarks):
            continue
        if pattern.startswith("mpi"):
            require_mpi(f"--only {pattern}", info)
        raise UsageError(f"no benchmark matches '{pattern}' (see `commatlas list`)")


def select(
    request: Selection, benchmarks: list[dict[str, Any]], info: dict[str, Any], topology: dict[str, Any] | None
) -> list[dict[str, Any]]:
    if request.suites is not None:
        check_suites(request.suites, benchmarks, info, topology)
        suites = request.suites
    elif request.only:
        suites = (ALL_SUITES,)  # naming benchmarks selects them whatever their suite
    else:
        suites = default_suites(info, topology)
    check_patterns(request.only, benchmarks, info)

    def chosen(b: dict[str, Any]) -> bool:
        every = ALL_SUITES in suites and (b["suite"] not in OPTIONAL_SUITES or request.suites is None)
        in_suite = every or b["suite"] in suites
        in_only = not request.only or any(fnmatchcase(b["key"], p) for p in request.only)
        excluded = any(fnmatchcase(b["key"], p) for p in request.exclude)
        return in_suite and in_only and not excluded

    selected = [b for b in benchmarks if chosen(b)]
    if not selected:
        raise UsageError("the selection matches no benchmark (see `commatlas list`)")
    # Decided here, before anything runs: a suite this machine cannot run is never started (its
    # benchmarks matched by --only are left out, and said so), so no phase fails after measuring.
    if request.suites is not None and ALL_SUITES in request.suites:
        every = blocked_suites({*KNOWN_SUITES, *(b["suite"] for b in benchmarks)} - set(OPTIONAL_SUITES),
                               benchmarks, info, topology)
        if every:
            raise UsageError(f"--suite all cannot run here ({reasons_text(every)}): "
                             f"leave --suite out to run what this machine can")
    blocked = blocked_suites({b["suite"] for b in selected}, benchmarks, info, topology)
    if blocked:
        kept = [b for b in selected if b["suite"] not in blocked]
        if not kept:
            raise UsageError(f"nothing selected can run here: {reasons_text(blocked)}")
        selected = kept
    if not any(b.get("runnable") or is_mpi_benchmark(b) for b in selected):
        raise UsageError(f"nothing selected can run here: {common_reason(selected)}")
    return selected


def accepts_ranks(benchmark: dict[str, Any], ranks: int) -> bool:
    high = benchmark.get("max_ranks", 0)
    return ranks >= benchmark.get("min_ranks", 1) and (high == 0 or ranks <= high)


def check_ranks(ranks: int, mpi_benchmarks: list[dict[str, Any]]) -> None:
    refused = [b for b in mpi_benchmarks if not accepts_ranks(b, ranks)]
    if refused:
        names = ", ".join(f"{b['key']} needs {rank_range_text(b)} ranks" for b in refused[:3])
        more = f" and {len(refused) - 3} more" if len(refused) > 3 else ""
        raise UsageError(f"--ranks {ranks} does not suit the selection: {names}{more}")
