"""`commatlas ARGS...` with a time line of where its wall time goes, on stderr when it ends: the
imports, the engine queries before the run, each engine phase, the summary and the report.

    python3 scripts/run_phases.py run --quick --out /tmp/q

For finding what a run spends outside the measuring (the goal: `--quick` in 15 s on 2x H100). It
wraps the package's functions by name; a name this version lacks is left out of the time line.
"""
from __future__ import annotations

import functools
import importlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

T0 = time.perf_counter()
SPANS: list[tuple[float, float, str]] = []


def timed(label: str, describe=None):
    def wrap(f):
        @functools.wraps(f)
        def g(*args, **kwargs):
            start = time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                SPANS.append((start, time.perf_counter(), label + (describe(*args, **kwargs) if describe else "")))
        return g
    return wrap


def wrap(module: str, name: str, label: str | None = None, describe=None, owner: str | None = None) -> None:
    target = importlib.import_module(module)
    if owner is not None:
        target = getattr(target, owner)
    if hasattr(target, name):
        setattr(target, name, timed(label or name, describe)(getattr(target, name)))


def follow_with_marks() -> None:
    """Inside each phase: from its launch to the program's first line and first progress event
    (start-up: the launcher, MPI_Init, CUDA), the first and last point, and from the last point to
    the stream's end (tear-down: NCCL communicators, MPI_Finalize)."""
    from commatlas.run.progress import PhaseProgress, parse_event
    follow = PhaseProgress.follow

    def marked(self, title, stream, *args, **kwargs):
        begun = time.perf_counter()
        marks: dict[str, float] = {}

        def lines():
            for line in stream:
                now = time.perf_counter()
                marks.setdefault("first line", now)
                event = parse_event(line)
                if event is not None:
                    marks.setdefault("first event", now)
                    if event.get("event") == "point":
                        marks.setdefault("first point", now)
                        marks["last point"] = now
                yield line
        try:
            return follow(self, title, lines(), *args, **kwargs)
        finally:
            end = time.perf_counter()
            points = [marks.get("first line", end), marks.get("first event", end), marks.get("first point", end),
                      marks.get("last point", end), end]
            labels = ["to the first line", "to the first event", "to the first point", "the points", "after the last point"]
            previous = begun
            for at, label in zip(points, labels):
                SPANS.append((previous, at, f"  {title}: {label}"))
                previous = at
    PhaseProgress.follow = marked


def main() -> int:
    import commatlas.cli as cli
    import commatlas.run.execute  # noqa: F401 - its import is part of every run
    SPANS.append((T0, time.perf_counter(), "imports (cli, run)"))
    wrap("commatlas.io.engine", "_query", "engine query", lambda self, *a: f" {a[0]}", owner="Engine")
    wrap("commatlas.io.engine", "info_topology_benchmarks", "engine info, topo, list side by side", owner="Engine")
    wrap("commatlas.run.execute", "plan_run")
    wrap("commatlas.run.execute", "run_phase", "phase", lambda command, title, *a, **k: f" {title}")
    wrap("commatlas.run.execute", "write_end_record")
    wrap("commatlas.run.execute", "print_summary", "summary")
    wrap("commatlas.run.execute", "write_report_if_available", "report")
    follow_with_marks()
    status = 1
    try:
        status = cli.main(sys.argv[1:])
    finally:
        end = time.perf_counter()
        print(f"{'from':>7} {'to':>7} {'s':>6}  (seconds since the script started)", file=sys.stderr)
        for start, stop, label in sorted(SPANS) + [(T0, end, "whole command")]:
            print(f"{start - T0:7.2f} {stop - T0:7.2f} {stop - start:6.2f}  {label}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
