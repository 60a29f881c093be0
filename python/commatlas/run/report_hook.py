"""Writes the report at the end of a run: a report that fails costs the user a warning, never the
run (a full disk or a read-only folder is the exception: what was asked for is not there)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from commatlas.io.outputs import write_failure
from commatlas.report import write_report
from commatlas.run.screen import print_whole


def write_report_if_available(run_dir: Path, console: Console) -> None:
    try:
        written = write_report(run_dir)
    except OSError as e:
        # A full disk or a read-only folder: the records are kept, but what was asked for (the
        # report) is not there; one line and exit status 2, and no half-written file.
        raise write_failure(Path(e.filename) if e.filename else run_dir, e) from None
    except Exception as e:  # noqa: BLE001 - a failing report must never cost the user the run
        console.print(f"commatlas: warning: report not written: {type(e).__name__}: {e}")
        return
    html = getattr(written, "html", written)
    if html:
        print_whole(console, f"report: {html}")  # a path to copy: never folded
