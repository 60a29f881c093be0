"""Calls the HTML report writer when this installation has one (commatlas.report is optional)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from commatlas.outputs import write_failure
from commatlas.screen import print_whole


def write_report_if_available(run_dir: Path, console: Console) -> None:
    try:
        from commatlas.report import write_report  # type: ignore[attr-defined]
    except ModuleNotFoundError as e:
        if e.name and e.name.startswith("commatlas.report"):
            return  # no report module in this installation: nothing to do
        console.print(f"commatlas: warning: report not written: {e}")
        return
    except ImportError as e:
        console.print(f"commatlas: warning: report not written: {e}")
        return
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
