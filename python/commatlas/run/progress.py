"""The live progress bar, driven by the engine's JSON progress events on its stdout."""

from __future__ import annotations

from typing import IO, Any, Callable

from rich.console import Console
from rich.table import Column
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

from commatlas.io.lines import json_object
from commatlas.units import format_gbps, format_latency_us, format_size


def parse_event(line: str) -> dict[str, Any] | None:
    """A progress event, or None for anything else the engine or launcher printed."""
    event = json_object(line)
    return event if event is not None and "event" in event else None


def describe_point(event: dict[str, Any], metric: str | None = None) -> str:
    """'host.memcpy 1 MiB 12.3 GB/s threads=2': the figure the benchmark is about, then the
    variant, which a narrow terminal cuts first."""
    parts = [str(event.get("benchmark", "")), format_size(event.get("bytes"))]
    status = event.get("status", "")
    if status == "ok" and metric == "latency" and event.get("median_s") is not None:
        parts.append(format_latency_us(event["median_s"] * 1e6))
    elif status == "ok" and event.get("gbps"):
        parts.append(format_gbps(event["gbps"]))
    elif status != "ok":
        parts.append(str(status))
    parts.append(str(event.get("params") or ""))
    return " ".join(p for p in parts if p)


BAR_WIDTH = 10


class PhaseProgress:
    """One bar per engine phase; lines that are not events go to the engine log."""

    def __init__(self, console: Console) -> None:
        # Phase, counts and times never shrink; the last point's description takes what is left
        # and is cut with "…" (80 columns leave it ~25 characters), and the bar gives way first.
        fixed = Column(no_wrap=True)
        self._progress = Progress(
            TextColumn("{task.description}", markup=False, table_column=fixed),
            BarColumn(bar_width=BAR_WIDTH, table_column=Column(no_wrap=True, min_width=6)),
            MofNCompleteColumn(table_column=fixed),
            TimeElapsedColumn(table_column=fixed),
            # Points differ in cost (a 1 GiB copy vs an 8-byte one), so this is a rough guide; the
            # default GPU suite runs for minutes and people want to know whether to wait.
            TextColumn("eta", table_column=fixed),
            TimeRemainingColumn(table_column=fixed),
            TextColumn("{task.fields[last]}", style="dim", markup=False,
                       table_column=Column(no_wrap=True, overflow="ellipsis", ratio=1, min_width=8)),
            console=console,
            transient=False,
            expand=True,  # gives the ratio column what the fixed ones leave

        )

    def __enter__(self) -> "PhaseProgress":
        self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.__exit__(*exc)

    def follow(self, title: str, stream: IO[str], log: IO[str], metrics: dict[str, str] | None = None,
               on_event: Callable[[], None] | None = None, total: int | None = None,
               point_of: Callable[[str], dict[str, Any] | None] | None = None) -> None:
        """Reads the engine's stdout until it closes; `metrics` maps benchmark keys to the
        figure each is about (bandwidth or latency); `on_event` hears of every progress event.
        A program that prints no events (the OSU-method reference) gives its `total` up front,
        and `point_of` reads a point from one of its lines (which still go to the log)."""
        metrics = metrics or {}
        task: TaskID = self._progress.add_task(title, total=total, last="")
        done = 0
        for line in stream:
            event = parse_event(line)
            if event is None:
                log.write(line)
                log.flush()
                event = point_of(line) if point_of is not None else None
                if event is None:
                    continue
                done += 1
                event = {**event, "done": done}
            if on_event is not None:
                on_event()
            if event["event"] == "start":
                self._progress.update(task, total=event.get("total", 0))
            elif event["event"] == "point":
                self._progress.update(task, completed=event.get("done", 0), last=describe_point(event, metrics.get(event.get("benchmark", ""))))
