"""Writes the report at the end of a run: a report that fails costs the user a warning, never the
run (a full disk or a read-only folder is the exception: what was asked for is not there)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable

from rich.console import Console

from commatlas.io.outputs import write_failure
from commatlas.report import load_writer, write_report
from commatlas.run.screen import print_whole


def start_loading_writer() -> Callable[[], None]:
    """Loads the report writer in a thread; returns the call that waits for it. `commatlas run`
    starts it before the engine's start-up queries and waits before the first phase, so the
    import (about 0.5 s, matplotlib) runs while the engine starts its GPU runtime, never beside a
    measurement. A writer that fails to load is left to `write_report`, which says why."""
    def load() -> None:
        try:
            load_writer()
        except Exception:  # noqa: BLE001 - said by write_report_if_available, where it matters
            pass
    thread = threading.Thread(target=load, name="commatlas-report-import", daemon=True)
    thread.start()
    return thread.join


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
