"""Finding and querying `commatlas-engine`, the C++ program that does every measurement.

The engine is found through $COMMATLAS_ENGINE first (a plain CMake build on a GPU machine),
then as the binary `pip install .` puts inside this package.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from commatlas.errors import CommatlasError, UsageError

ENGINE_ENV = "COMMATLAS_ENGINE"
PACKAGED_ENGINE = Path(__file__).resolve().parent.parent / "_engine" / "commatlas-engine"
ENGINE_ERROR_PREFIX = "commatlas-engine: error: "
# The engine exits with this status when the request itself is wrong (bad size list, ...).
ENGINE_USAGE_STATUS = 2
# Queries (info, list, topo) answer in well under a second; a hung driver must not hang us.
QUERY_TIMEOUT_S = 120
# `commatlas-engine hold` ends as soon as its standard input closes; one stuck in the driver is killed.
HOLD_EXIT_TIMEOUT_S = 5


def locate_engine() -> Path:
    configured = os.environ.get(ENGINE_ENV)
    if configured:
        path = Path(configured)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise UsageError(f"{ENGINE_ENV}={configured} is not an executable file")
        return path.resolve()
    if PACKAGED_ENGINE.is_file():
        return PACKAGED_ENGINE
    raise UsageError(
        "the commatlas-engine binary was not found: install commatlas with `pip install .`, "
        f"or set {ENGINE_ENV} to a built engine (e.g. build/engine/commatlas-engine)"
    )


def engine_message(stderr: str) -> str:
    """The engine's one-line reason, without its program-name prefix."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return "no message"
    last = lines[-1]
    return last[len(ENGINE_ERROR_PREFIX):] if last.startswith(ENGINE_ERROR_PREFIX) else last


def raise_for_engine_failure(status: int, stderr: str, what: str) -> None:
    if status == 0:
        return
    message = engine_message(stderr)
    if status == ENGINE_USAGE_STATUS:
        raise UsageError(message)
    raise CommatlasError(f"{what} failed (exit status {status}): {message}")


@dataclass(frozen=True)
class Engine:
    path: Path

    @classmethod
    def find(cls) -> "Engine":
        return cls(locate_engine())

    def _query(self, *args: str) -> Any:
        return self._queries([args])[0]()

    def _queries(self, commands: list[tuple[str, ...]]) -> list[Callable[[], Any]]:
        """Runs the queries side by side (on a GPU machine each one starts the driver, which takes
        longer than the query); returns, in the same order, one call per query that gives its JSON
        or raises its error, so that failures are said in the order the queries were asked."""
        processes: list[subprocess.Popen | OSError] = []
        try:
            for args in commands:
                try:
                    processes.append(subprocess.Popen([str(self.path), *args], stdout=subprocess.PIPE,
                                                      stderr=subprocess.PIPE, text=True))
                except OSError as e:
                    processes.append(e)
            deadline = time.monotonic() + QUERY_TIMEOUT_S
            done = [p if isinstance(p, OSError) else _finished(p, deadline) for p in processes]
        finally:
            for p in processes:
                if isinstance(p, subprocess.Popen) and p.poll() is None:
                    p.kill()
                    p.wait()
        return [functools.partial(self._answer, args, d) for args, d in zip(commands, done)]

    def _answer(self, args: tuple[str, ...], done: tuple[int, str, str] | OSError | subprocess.TimeoutExpired) -> Any:
        if isinstance(done, (OSError, subprocess.TimeoutExpired)):
            raise CommatlasError(f"cannot run {self.path}: {done}")
        status, stdout, stderr = done
        raise_for_engine_failure(status, stderr, f"commatlas-engine {args[0]}")
        try:
            return json.loads(stdout)
        except json.JSONDecodeError as e:
            raise CommatlasError(f"commatlas-engine {args[0]} printed something that is not JSON: {e}") from None

    @contextlib.contextmanager
    def driver_held(self) -> Iterator[None]:
        """While the block runs, one `commatlas-engine hold` keeps the GPU driver started, so that
        each engine process started meanwhile (the queries, each phase, the OSU-method job) finds it
        up instead of paying for it again: about 0.45 s a process on 2x H100 (engine/app/main.cpp,
        cmd_hold). It holds no GPU context and no memory. Nothing depends on it: an engine that
        cannot start it still measures, only later."""
        try:
            holder: subprocess.Popen[bytes] | None = subprocess.Popen(
                [str(self.path), "hold"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:
            holder = None
        try:
            yield
        finally:
            if holder is not None:
                _release(holder)

    def ingest(self, measurements: list[dict[str, Any]], out: Path) -> None:
        """Appends to `out` the records of measurements taken outside the engine (the OSU-method
        program, the torch suite), written by the engine's own record code (engine/core/ingest.h)."""
        if not measurements:
            return
        text = "".join(json.dumps(m) + "\n" for m in measurements)
        try:
            done = subprocess.run([str(self.path), "ingest", "--out", str(out)], input=text, capture_output=True,
                                  text=True, timeout=QUERY_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise CommatlasError(f"cannot run {self.path}: {e}") from None
        raise_for_engine_failure(done.returncode, done.stderr, "commatlas-engine ingest")

    def ingested(self, measurements: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The records `ingest` writes for these measurements, without a results file to keep them."""
        with tempfile.TemporaryDirectory(prefix="commatlas-ingest-") as folder:
            out = Path(folder) / "records.jsonl"
            self.ingest(measurements, out)
            if not out.exists():
                return []
            return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]

    def info(self) -> dict[str, Any]:
        return self._query("info", "--json")

    def benchmarks(self, run_arguments: list[str] | None = None) -> list[dict[str, Any]]:
        """Every registered benchmark. Run options passed along are validated by the engine
        exactly as `run` would (sizes, NUMA nodes, memory), without running anything."""
        return self._query("list", "--json", *(run_arguments or []))

    def topology(self) -> dict[str, Any] | None:
        """The GPU topology, {"gpus": [], "reason": ...} without GPUs, None when this engine
        has no topo command at all (built without the CUDA backend)."""
        return _topology(self._queries([("topo", "--json")])[0])

    def info_topology_benchmarks(self, run_arguments: list[str] | None = None) \
            -> tuple[dict[str, Any], dict[str, Any] | None, list[dict[str, Any]]]:
        """info(), topology() and benchmarks(run_arguments), asked side by side; an error is
        raised as the first of the three that failed would raise it when asked one at a time."""
        info, topology, benchmarks = self._queries([("info", "--json"), ("topo", "--json"),
                                                    ("list", "--json", *(run_arguments or []))])
        return info(), _topology(topology), benchmarks()


def _release(holder: subprocess.Popen[bytes]) -> None:
    """Closes the holder's standard input, which ends it; kills one that does not end."""
    try:
        if holder.stdin is not None:
            holder.stdin.close()
    except OSError:
        pass  # it has gone already
    try:
        holder.wait(timeout=HOLD_EXIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        holder.kill()
        holder.wait()


def _finished(process: subprocess.Popen, deadline: float) -> tuple[int, str, str] | subprocess.TimeoutExpired:
    try:
        stdout, stderr = process.communicate(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return subprocess.TimeoutExpired(process.args, QUERY_TIMEOUT_S)  # the limit, not what was left of it
    return process.returncode, stdout, stderr


def _topology(answer: Callable[[], Any]) -> dict[str, Any] | None:
    try:
        return answer()
    except UsageError as e:
        if "unknown command" in str(e):
            return None  # an engine built without the CUDA backend
        raise


def backend_built(info: dict[str, Any], name: str) -> bool:
    return bool(info.get("backends", {}).get(name, {}).get("built"))


def gpu_backend(info: dict[str, Any]) -> str:
    """The GPU runtime the engine was built for: "hip" (AMD) when that backend is built, else "cuda"."""
    return "hip" if backend_built(info, "hip") else "cuda"


def backend_reason(info: dict[str, Any], name: str) -> str:
    backend = info.get("backends", {}).get(name)
    if backend is None:
        return f"built without the {name} backend"
    return str(backend.get("reason") or backend.get("error") or "not built")


def gpu_count(topology: dict[str, Any] | None) -> int:
    return len(topology.get("gpus", [])) if topology else 0


def normalise_mpi_name(name: str) -> str:
    """"Open MPI", "OpenMPI", "ompi" -> "openmpi"; "Cray-MPICH" -> "cray-mpich"."""
    text = re.sub(r"[\s_]+", "-", name.strip().lower())
    return {"open-mpi": "openmpi", "ompi": "openmpi", "cray": "cray-mpich", "craympich": "cray-mpich",
            "mvapich2": "mvapich", "mvapich-gdr": "mvapich", "mvapich2-gdr": "mvapich", "mvapichplus": "mvapich-plus",
            "intel": "intel-mpi", "impi": "intel-mpi", "intelmpi": "intel-mpi"}.get(text, text)


# --- what the engine's benchmarks need: suites, and their reasons made short ------------------

MPI_SUITES = ("mpi", "mpi-gpu")
KNOWN_SUITES = ("host", "gpu", "nccl", "mpi", "mpi-gpu")
# Where in the engine's sources a GPU error was raised: for its developers, not in a one-line reason.
SOURCE_LOCATION = re.compile(r"\s+at\s+\S+\.(?:cpp|cu|h|hpp|cuh):\d+")
# The backends each suite's benchmarks are compiled with (a suite is empty without them); "cuda"
# stands for the GPU runtime, which is "hip" in an AMD build (gpu_backend).
SUITE_BACKENDS = {"host": (), "gpu": ("cuda",), "nccl": ("cuda", "nccl"), "mpi": ("mpi",), "mpi-gpu": ("mpi", "cuda")}


def short_reason(reason: str) -> str:
    return SOURCE_LOCATION.sub("", reason).strip()


def needs_gpu(suite: str) -> bool:
    return "cuda" in SUITE_BACKENDS.get(suite, ())


def without_nested_detail(reason: str) -> str:
    """'no NVIDIA driver, or one older than the CUDA runtime (cudaGetDeviceCount failed: ... (...))'
    without its parenthesized detail, when that detail nests further: the runtime's own words
    are for `commatlas info`, not for a line printed on every run."""
    cut = reason.find(" (")
    if cut > 0 and reason.find("(", cut + 2) > 0 and reason.endswith(")"):
        return reason[:cut]
    return reason


def no_gpu_reason(topology: dict[str, Any] | None) -> str:
    why = without_nested_detail(short_reason(str((topology or {}).get("reason") or "")))
    return f"no GPU on this machine ({why})" if why else "no GPU on this machine"


def rank_range_text(benchmark: dict[str, Any]) -> str:
    low, high = benchmark.get("min_ranks", 1), benchmark.get("max_ranks", 0)
    if high == 0:
        return f"{low}+"
    return str(low) if low == high else f"{low}-{high}"
