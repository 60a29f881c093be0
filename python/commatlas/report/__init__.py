"""The report of one run: `write_report(run_dir)` writes report.html and summary.md.

The writer is imported when called: every module of this package runs this file first, and the
terminal's views (summary, views, topo, bestmap) must not pay for matplotlib."""
from __future__ import annotations

from typing import Any


def write_report(run_dir: Any, out_dir: Any = None, allocator: str | None = None, library: str | None = None) -> Any:
    from commatlas.report.render import write_report as write  # deliberate: matplotlib, only when writing

    return write(run_dir, out_dir, allocator, library)


__all__ = ["write_report"]
