"""The live progress bar, driven by the engine's JSON progress events on its stdout."""

from __future__ import annotations

import json
from typing import IO, Any

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

from commatlas.units import format_gbps, format_latency_us, format_size


def parse_event(line: str) -> dict[str, Any] | None:
    """A progress event, or None for anything else the engine or launcher printed."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        event = json.loads(line)
    except json.JSONDecodeError:
        return None
    return event if isinstance(event, dict) and "event" in event else None


def describe_point(event: dict[str, Any], metric: str | None = None) -> str:
    """'host.memcpy threads=2 1 MiB 12.3 GB/s': the figure the benchmark is about."""
    parts = [str(event.get("benchmark", "")), str(event.get("params") or ""), format_size(event.get("bytes"))]
    status = event.get("status", "")
    if status == "ok" and metric == "latency" and event.get("median_s") is not None:
        parts.append(format_latency_us(event["median_s"] * 1e6))
    elif status == "ok" and event.get("gbps"):
        parts.append(format_gbps(event["gbps"]))
    elif status != "ok":
        parts.append(str(status))
    return " ".join(p for p in parts if p)


class PhaseProgress:
    """One bar per engine phase; lines that are not events go to the engine log."""

    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            # Points differ in cost (a 1 GiB copy vs an 8-byte one), so this is a rough guide; the
            # default GPU suite runs for minutes and people want to know whether to wait.
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[last]}", style="dim"),
            console=console,
            transient=False,
        )

    def __enter__(self) -> "PhaseProgress":
        self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.__exit__(*exc)

    def follow(self, title: str, stream: IO[str], log: IO[str], metrics: dict[str, str] | None = None) -> None:
        """Reads the engine's stdout until it closes; `metrics` maps benchmark keys to the
        figure each is about (bandwidth or latency)."""
        metrics = metrics or {}
        task: TaskID = self._progress.add_task(title, total=None, last="")
        for line in stream:
            event = parse_event(line)
            if event is None:
                log.write(line)
                log.flush()
            elif event["event"] == "start":
                self._progress.update(task, total=event.get("total", 0))
            elif event["event"] == "point":
                self._progress.update(task, completed=event.get("done", 0), last=describe_point(event, metrics.get(event.get("benchmark", ""))))
