"""Running the torch suite inside `commatlas run`: its copies in one plain process, then its
torch.distributed points and the DDP step with one process per GPU under the launcher the engine's
MPI phase uses. The worker's measurements become records through `commatlas-engine ingest`, so
they are written by the same code as every engine record."""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from commatlas.errors import CommatlasError
from commatlas.frameworks.torch.catalog import BENCHMARKS, BY_KEY, SUITE, fixed_environment
from commatlas.io.lines import json_object

WORKER = "commatlas.frameworks.torch.worker"
QUICK_SIZES = (8, 1 << 20)
QUICK_BUCKETS = (25,)


@dataclass(frozen=True)
class TorchPlan:
    keys: tuple[str, ...]
    launcher: Any | None     # commatlas.launcher.Launcher for the distributed part; None: none here
    no_launcher: str = ""    # why there is none (the distributed points become skips)

    @property
    def copy_keys(self) -> tuple[str, ...]:
        return tuple(k for k in self.keys if BY_KEY[k].part == "copy")

    @property
    def dist_keys(self) -> tuple[str, ...]:
        return tuple(k for k in self.keys if BY_KEY[k].part == "dist")

    def describe(self) -> str:
        parts = []
        if self.copy_keys:
            parts.append("copies in one process")
        if self.dist_keys:
            if self.launcher is not None:
                ranks = f"{self.launcher.ranks} ranks" if self.launcher.ranks else "the launcher's ranks"
                parts.append(f"torch.distributed and DDP on {ranks} under " + " ".join(self.launcher.prefix))
            else:
                parts.append(f"torch.distributed and DDP skipped: {self.no_launcher}")
        return "; ".join(parts)


def unbound(launcher: Any) -> Any:
    """The launcher without the engine's binding of each rank to cores: a PyTorch process runs its
    Python thread, NCCL's proxy thread and DDP's reducer beside each other, as under torchrun
    (which binds none). A launcher line the user gave (kind "custom") is theirs and kept."""
    if launcher.kind != "openmpi":
        return launcher
    prefix = list(launcher.prefix)
    for flag in ("--map-by", "--bind-to"):
        while flag in prefix:
            at = prefix.index(flag)
            del prefix[at:at + 2]
    return replace(launcher, prefix=(prefix[0], "--bind-to", "none", *prefix[1:]))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def worker_arguments(part: str, keys: tuple[str, ...], quick: bool, time_budget: float | None,
                     repeat: int | None, env_names: tuple[str, ...]) -> list[str]:
    args = [sys.executable, "-m", WORKER, "--part", part, "--keys", ",".join(keys)]
    if quick:
        args += ["--sizes", ",".join(str(s) for s in QUICK_SIZES), "--buckets", ",".join(str(b) for b in QUICK_BUCKETS),
                 "--steps", "3"]
    if time_budget is not None:
        args += ["--time-budget", f"{time_budget:g}"]
    if repeat is not None:
        args += ["--repeat-index", str(repeat)]
    if env_names:
        args += ["--record-env", ",".join(env_names)]
    return args


def measurement_of(line: str) -> dict[str, Any] | None:
    """One of the worker's measurement lines, or None (launcher noise, NCCL's words)."""
    out = json_object(line)
    return out if out is not None and out.get("suite") == SUITE and out.get("type") in ("result", "skip", "error") else None


def progress_point(line: str) -> dict[str, Any] | None:
    m = measurement_of(line)
    if m is None:
        return None
    event: dict[str, Any] = {"event": "point", "benchmark": m["benchmark"], "bytes": m.get("bytes"),
                             "status": "ok" if m["type"] == "result" and m["verified"]["ok"] else m["type"]}
    if m["type"] == "result":
        samples = sorted(m["samples_s"])
        median = samples[len(samples) // 2]
        event["median_s"] = median
        if m["metric"] == "bandwidth" and median > 0:
            event["gbps"] = m["bytes_per_op"] / median / 1e9
    return event


METRICS = {b.key: b.metric for b in BENCHMARKS}


def skips(keys: tuple[str, ...], reason: str, ranks: int, repeat: int | None) -> list[dict[str, Any]]:
    out = []
    for key in keys:
        m: dict[str, Any] = {"type": "skip", **BY_KEY[key].declaration(), "params": {},
                             "movement": BY_KEY[key].movement(), "bytes": None, "ranks": ranks, "reason": reason}
        if repeat is not None:
            m["repeat"] = repeat
        out.append(m)
    return out


def run_torch_suite(plan: TorchPlan, engine: Any, results: Path, log_path: Path, run_phase: Callable[..., Any],
                    progress: Any, environment: dict[str, str], unset: tuple[str, ...], repeat: int | None,
                    env_names: tuple[str, ...], quick: bool, time_budget: float | None) -> None:
    """Both parts of the suite for one pass; what a part could not measure is a skip record with
    its reason, and a worker that failed leaves the run going (the engine's figures stand)."""
    env = {**environment, **fixed_environment()}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    parts: list[tuple[str, tuple[str, ...], Any]] = []
    if plan.copy_keys:
        parts.append(("copy", plan.copy_keys, None))
    if plan.dist_keys:
        parts.append(("dist", plan.dist_keys, plan.launcher))
    for part, keys, launcher in parts:
        if part == "dist" and launcher is None:
            engine.ingest(skips(keys, plan.no_launcher or "no MPI launcher to start one process per GPU", 1, repeat),
                          results)
            continue
        program = worker_arguments(part, keys, quick, time_budget, repeat, env_names)
        part_env = dict(env)
        if launcher is not None:
            part_env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
            command = launcher.command(program, part_env)
        else:
            command = program
        lines: list[str] = []
        title = "PyTorch" + (f" ({launcher.ranks or '?'} ranks)" if launcher is not None else "")
        outcome = run_phase(command, title, log_path, progress, METRICS, part_env, unset,
                            None, keep=lines, total=None, point_of=progress_point)
        measurements = [m for m in (measurement_of(line) for line in lines) if m is not None]
        if outcome.status != 0:
            said = {m["benchmark"] for m in measurements}
            ranks = launcher.ranks if launcher is not None and launcher.ranks else 1
            measurements += skips(tuple(k for k in keys if k not in said),
                                  f"the PyTorch worker failed (exit status {outcome.status}); see {log_path.name}",
                                  ranks, repeat)
        try:
            engine.ingest(measurements, results)
        except CommatlasError as e:
            # The engine refused the worker's lines (a bug on one side): nothing of them is a figure.
            engine.ingest(skips(keys, f"commatlas-engine ingest refused the PyTorch worker's measurements: {e}",
                                launcher.ranks if launcher is not None and launcher.ranks else 1, repeat), results)
