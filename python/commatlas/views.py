"""What `commatlas list` and `commatlas info` print: the engine's JSON, made readable."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from commatlas.selection import rank_range_text
from commatlas.units import format_size


def benchmarks_table(benchmarks: list[dict[str, Any]]) -> Table:
    table = Table(title="Benchmarks in this build", title_justify="left")
    table.add_column("key", no_wrap=True)
    for column in ("category", "interface", "suite", "metric", "ranks", "variants", "runnable here"):
        table.add_column(column, overflow="fold")
    default_total = full_total = 0
    for b in benchmarks:
        here = "yes" if b.get("runnable") else f"no: {b.get('reason', 'unknown reason')}"
        table.add_row(b["key"], b["category"], b["interface"], b["suite"], b["metric"], rank_range_text(b),
                      tiers_text(b), here)
        variants = b.get("variants") or {}
        default_total += int(variants.get("default", 0))
        full_total += int(variants.get("full", 0))
    table.caption = (f"{default_total} default + {full_total} full variants runnable here "
                     "(`commatlas run --full` adds the full tier; docs/tiers.md says why each is there)")
    return table


def tiers_text(benchmark: dict[str, Any]) -> str:
    """"3 default + 2 full" for a runnable benchmark; its variants are only known where it runs."""
    variants = benchmark.get("variants")
    if not variants:
        return "-"
    default, full = int(variants.get("default", 0)), int(variants.get("full", 0))
    if full == 0:
        return f"{default} default"
    if default == 0:
        return f"{full} full (only with --full)"
    return f"{default} default + {full} full"


def backend_details(backend: dict[str, Any]) -> str:
    if not backend.get("built"):
        return str(backend.get("reason", "not built"))
    return "; ".join(f"{k}: {v}" for k, v in backend.items() if k != "built") or "-"


def info_tables(info: dict[str, Any]) -> list[Table]:
    build = Table(title="Engine", title_justify="left", show_header=False)
    build.add_column("field")
    build.add_column("value", overflow="fold")
    for field in ("version", "git_sha", "git_dirty", "provenance", "compiler", "build_type"):
        build.add_row(field, str(info.get(field, "-")))

    host = info.get("host", {})
    machine = Table(title="Host", title_justify="left", show_header=False)
    machine.add_column("field")
    machine.add_column("value", overflow="fold")
    machine.add_row("hostname", str(host.get("hostname", "-")))
    machine.add_row("os", f"{host.get('os', '-')} {host.get('kernel', '')} {host.get('machine', '')}".strip())
    machine.add_row("cpu", f"{host.get('cpu_model', '-')} ({host.get('logical_cpus', '?')} logical CPUs)")
    machine.add_row("memory", f"{format_size(host.get('memory_total_bytes'))} total, "
                              f"{format_size(host.get('memory_available_bytes'))} available")
    placement = "buffers can be placed" if host.get("numa_placement") else "no libnuma: placement not possible"
    machine.add_row("numa nodes", f"{', '.join(map(str, host.get('numa_nodes', [])))} ({placement})")

    backends = Table(title="Backends", title_justify="left")
    backends.add_column("backend")
    backends.add_column("built")
    backends.add_column("versions / reason", overflow="fold")
    for name, backend in info.get("backends", {}).items():
        backends.add_row(name, "yes" if backend.get("built") else "no", backend_details(backend))
    return [build, machine, backends]


def print_info(console: Console, info: dict[str, Any]) -> None:
    for table in info_tables(info):
        console.print(table)
