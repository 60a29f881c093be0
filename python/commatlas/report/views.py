"""What `commatlas list` and `commatlas info` print: the engine's JSON, made readable."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from commatlas.io.engine import MPI_SUITES, gpu_count, needs_gpu, no_gpu_reason, rank_range_text, short_reason
from commatlas.units import format_size, memory_peak_text, numa_nodes_text


# Below this many columns the category and interface columns are left out (`list --json` has them).
WIDE_COLUMNS = 100
MPI_REASON = "runs under an MPI launcher: `commatlas run` starts it with mpiexec"


def here_reason(benchmark: dict[str, Any], topology: dict[str, Any] | None = None) -> str | None:
    """None when it runs here; else why not, without the engine's source locations."""
    if benchmark.get("runnable"):
        return None
    # An engine outside an MPI job says first that it needs one; a GPU suite without a GPU
    # cannot run under mpiexec either.
    if topology is not None and needs_gpu(benchmark.get("suite", "")) and gpu_count(topology) == 0:
        return no_gpu_reason(topology)
    if benchmark.get("suite") in MPI_SUITES and benchmark.get("min_ranks", 1) > 1:
        return MPI_REASON
    return short_reason(str(benchmark.get("reason") or "unknown reason"))


def tiers_text(benchmark: dict[str, Any]) -> str:
    """"3 + 2 full" for a runnable benchmark (default variants, then those only --full runs); its
    variants are only known where it runs."""
    variants = benchmark.get("variants")
    if not variants:
        return "-"
    default, full = int(variants.get("default", 0)), int(variants.get("full", 0))
    if full == 0:
        return f"{default}"
    return f"{default} + {full} full"


def benchmarks_table(benchmarks: list[dict[str, Any]], width: int = 80,
                     topology: dict[str, Any] | None = None) -> tuple[Table, list[str]]:
    """The table and its footnotes: a reason shared by many rows (every GPU benchmark on a
    machine without a GPU) is said once, below the table, instead of on every row."""
    wide = width >= WIDE_COLUMNS
    table = Table(title=f"{len(benchmarks)} benchmarks in this build", title_justify="left", box=None,
                  # One space between columns below 100: at 80 two cut "with MPI [1]" to "with MPI […".
                  padding=(0, 2 if wide else 1, 0, 0), show_edge=False, header_style="bold")
    table.add_column("key", no_wrap=True)
    # The interface column is left to `list --json`: records name the mechanism (movement.mechanism).
    # Below 100 columns the metric goes too (the wide layout and `list --json` show it): with the
    # longest key (pattern.bucketed_allreduce.gpu_aware) the row is 84 columns with it.
    names = ["category", "suite", "metric", "ranks", "variants", "runs here"] if wide else \
        ["suite", "ranks", "variants", "runs here"]
    for column in names:
        table.add_column(column, no_wrap=True)
    notes: list[str] = []
    default_total = full_total = 0
    for b in benchmarks:
        variants = b.get("variants") or {}
        default_total += int(variants.get("default", 0))
        full_total += int(variants.get("full", 0))
        reason = here_reason(b, topology)
        if reason is None:
            here = "yes"
        else:
            if reason not in notes:
                notes.append(reason)
            here = ("with MPI" if reason == MPI_REASON else "no") + f" [{notes.index(reason) + 1}]"
        cells = [b["category"], b["suite"], b["metric"]] if wide else [b["suite"]]
        table.add_row(b["key"], *cells, rank_range_text(b), tiers_text(b), here)
    tiers = [f"variants: {default_total} by default + {full_total} with --full (docs/tiers.md)"] \
        if default_total + full_total else []
    return table, [f"[{i}] {note}" for i, note in enumerate(notes, 1)] + tiers


def print_benchmarks(console: Console, benchmarks: list[dict[str, Any]], topology: dict[str, Any] | None) -> None:
    table, notes = benchmarks_table(benchmarks, console.width, topology)
    console.print(table)
    for note in notes:
        console.print(note, markup=False, highlight=False)


def backend_details(backend: dict[str, Any]) -> str:
    if not backend.get("built"):
        return short_reason(str(backend.get("reason", "not built")))
    # One fact per line: a library's version string alone can fill a narrow terminal's line.
    return "\n".join(f"{k}: {short_reason(str(v))}" for k, v in backend.items() if k != "built") or "-"


def info_tables(info: dict[str, Any]) -> list[Table]:
    build = Table(title="Engine", title_justify="left", show_header=False)
    build.add_column("field")
    build.add_column("value", overflow="fold")
    for field in ("version", "git_sha", "compiler", "build_type"):
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
    machine.add_row("numa", f"{numa_nodes_text(host.get('numa_nodes'))}, {placement}")
    machine.add_row("memory peak", memory_peak_text(host.get("memory_peak")))

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
