"""The compact table printed at the end of a run: per benchmark its best figure (highest
bandwidth, or smallest latency) with the size and variant it came from; skips and errors."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from rich.console import Console, Group
from rich.table import Table

from commatlas.pair_matrix import matrix_table, pair_matrices
from commatlas.units import format_gbps, format_latency_us, format_size


def describe_params(params: dict[str, Any] | None) -> str:
    return " ".join(f"{k}={v}" for k, v in (params or {}).items())


def best_result(results: list[dict[str, Any]]) -> dict[str, Any]:
    if results[0].get("metric") == "latency":
        return min(results, key=lambda r: r.get("latency_us") or float("inf"))
    return max(results, key=lambda r: r.get("bandwidth_gbps") or 0.0)


def best_figure(record: dict[str, Any]) -> str:
    if record.get("metric") == "latency":
        return format_latency_us(record.get("latency_us"))
    text = format_gbps(record.get("bandwidth_gbps"))
    peak = record.get("peak")
    if peak and peak.get("fraction"):
        text += f" ({peak['fraction']:.0%} of peak)"
    collective = record.get("collective")
    if collective:
        text += f", busbw {format_gbps(collective.get('busbw_gbps'))}"
    return text


def results_table(records: list[dict[str, Any]]) -> Table | None:
    by_benchmark: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        if r.get("type") == "result":
            by_benchmark[r["benchmark"]].append(r)
    if not by_benchmark:
        return None
    table = Table(title="Best figure per benchmark (bandwidth from the median sample)", title_justify="left")
    for column in ("benchmark", "metric", "best", "size", "variant", "ranks", "points"):
        table.add_column(column, overflow="fold")
    for key in sorted(by_benchmark):
        results = by_benchmark[key]
        best = best_result(results)
        table.add_row(
            key, best.get("metric", ""), best_figure(best), format_size(best.get("bytes")),
            describe_params(best.get("params")), str(best.get("ranks", "")), str(len(results)),
        )
    return table


def skips_table(records: list[dict[str, Any]]) -> Table | None:
    reasons = Counter((r["benchmark"], r.get("reason", "")) for r in records if r.get("type") == "skip")
    if not reasons:
        return None
    table = Table(title="Skipped", title_justify="left")
    for column in ("benchmark", "points", "reason"):
        table.add_column(column, overflow="fold")
    for (key, reason), count in sorted(reasons.items()):
        table.add_row(key, str(count), reason)
    return table


def errors_table(records: list[dict[str, Any]]) -> Table | None:
    errors = [r for r in records if r.get("type") == "error"]
    if not errors:
        return None
    table = Table(title="Errors", title_justify="left", title_style="bold red")
    for column in ("benchmark", "variant", "size", "message"):
        table.add_column(column, overflow="fold")
    for r in errors:
        table.add_row(r["benchmark"], describe_params(r.get("params")), format_size(r.get("bytes")), r.get("message", ""))
    return table


def print_summary(console: Console, records: list[dict[str, Any]]) -> None:
    tables = [t for t in (results_table(records), skips_table(records), errors_table(records)) if t is not None]
    tables[1:1] = [matrix_table(m) for m in pair_matrices(records)]
    if tables:
        console.print(Group(*tables))
