"""The report of one run: `write_report(run_dir)` writes report.html and summary.md.

Imported lazily: commatlas.answers uses the map and findings modules of this package, and must
not pay for matplotlib."""
from __future__ import annotations

from typing import Any


def write_report(run_dir: Any, out_dir: Any = None, allocator: str | None = None, library: str | None = None) -> Any:
    from commatlas.report.render import write_report as write

    return write(run_dir, out_dir, allocator, library)


__all__ = ["write_report"]
