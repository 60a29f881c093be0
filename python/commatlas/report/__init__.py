"""The report of one run: `write_report(run_dir)` writes report.html and summary.md.

The writer is imported when called: every module of this package runs this file first, and the
terminal's views (summary, views, topo, bestmap) must not pay for matplotlib."""
from __future__ import annotations

from typing import Any


def write_report(run_dir: Any, out_dir: Any = None, allocator: str | None = None, library: str | None = None) -> Any:
    from commatlas.report.render import write_report as write  # deliberate: matplotlib, only when writing

    return write(run_dir, out_dir, allocator, library)


def load_writer() -> None:
    """Imports the writer (matplotlib included) and compiles its templates ahead of `write_report`,
    for a caller that has time to spare now: `commatlas run` does it while the engine answers its
    start-up queries, before anything is measured, instead of after the measuring."""
    import commatlas.report.render  # noqa: F401  # deliberate: the import is the work, done ahead
    from commatlas.report.templating import compile_templates  # deliberate: as write_report's import

    compile_templates()


__all__ = ["load_writer", "write_report"]
