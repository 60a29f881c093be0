"""The report of one run: `write_report(run_dir)` writes report.html and summary.md."""
from commatlas.report.render import ReportPaths, write_report

__all__ = ["ReportPaths", "write_report"]
