"""`commatlas export RUN_DIR`: one CSV row per result, for spreadsheets and pandas users.

Parameters become `param.<name>` columns (the union over the run; empty where a benchmark has
no such parameter). Samples are not exported: they stay in results.jsonl.
"""
from __future__ import annotations

import csv
import io
import math
import sys
from pathlib import Path
from typing import Any, TextIO

from commatlas.io.outputs import check_file_target, write_text
from commatlas.io.results import Result, load_run

FIXED_COLUMNS = (
    "benchmark", "category", "interface", "suite", "metric", "ranks", "bytes", "bytes_per_op",
    "timing_method", "samples", "ops_per_sample", "warmup_samples", "max_over_ranks",
    "min_s", "p5_s", "median_s", "mean_s", "p95_s", "p99_s", "max_s", "stddev_s", "cv",
    "bandwidth_gbps", "latency_us", "latency_includes",
    "peak_gbps", "peak_source", "peak_fraction",
    "collective_operation", "algbw_gbps", "bus_factor", "busbw_gbps", "goodput_gbps",
    "verified_ok", "bytes_checked", "verified_method", "line",
)
STATS = ("min_s", "p5_s", "median_s", "mean_s", "p95_s", "p99_s", "max_s", "stddev_s", "cv")


def columns(results: list[Result]) -> list[str]:
    params = sorted({k for r in results for k in r.params})
    return list(FIXED_COLUMNS[:7]) + [f"param.{k}" for k in params] + list(FIXED_COLUMNS[7:])


def row(r: Result) -> dict[str, Any]:
    out: dict[str, Any] = dict(
        benchmark=r.benchmark, category=r.category, interface=r.interface, suite=r.suite, metric=r.metric,
        ranks=r.ranks, bytes=r.bytes, bytes_per_op=r.bytes_per_op, timing_method=r.timing.method,
        samples=r.timing.samples, ops_per_sample=r.timing.ops_per_sample, warmup_samples=r.timing.warmup_samples,
        max_over_ranks=r.timing.max_over_ranks, bandwidth_gbps=r.bandwidth_gbps, latency_us=r.latency_us,
        latency_includes=r.latency_includes or "", verified_ok=r.verified_ok, bytes_checked=r.bytes_checked,
        verified_method=r.verified_method or "", line=r.line,
    )
    out.update({k: getattr(r.stats, k) for k in STATS})
    out.update({f"param.{k}": v for k, v in r.params.items()})
    if r.peak:
        # An unknown peak is an empty cell like every other missing field, never "nan".
        out.update(peak_gbps=blank_if_nan(r.peak.gbps), peak_source=r.peak.source,
                   peak_fraction=blank_if_nan(r.peak.fraction))
    if r.collective:
        c = r.collective
        out.update(collective_operation=c.operation, algbw_gbps=c.algbw_gbps, bus_factor=c.bus_factor,
                   busbw_gbps=c.busbw_gbps, goodput_gbps=c.goodput_gbps)
    return out


def blank_if_nan(x: Any) -> Any:
    return "" if isinstance(x, float) and not math.isfinite(x) else x


def write_csv(results: list[Result], stream: TextIO) -> None:
    writer = csv.DictWriter(stream, fieldnames=columns(results), restval="", lineterminator="\n")
    writer.writeheader()
    for r in results:
        writer.writerow(row(r))


def export_csv(run_dir: str | Path, out: str | Path | None = None) -> Path | None:
    """Writes RUN_DIR/results.csv, or `out`; out "-" writes to stdout (and returns None)."""
    if out not in (None, "-"):
        check_file_target(Path(out))  # before reading a large run
    run = load_run(run_dir)
    if out == "-":
        write_csv(run.results, sys.stdout)
        return None
    path = Path(out) if out else run.directory / "results.csv"
    buffer = io.StringIO()
    write_csv(run.results, buffer)
    write_text(path, buffer.getvalue())
    return path
