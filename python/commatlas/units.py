"""How sizes and rates are written for people, everywhere (terminal, report, compare): binary
sizes (KiB, MiB), GB/s = 1e9 B/s, latencies with a unit that leaves a few digits."""

from __future__ import annotations

import math

_BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def _missing(x: float | None) -> bool:
    return x is None or not math.isfinite(x)


def format_size(num_bytes: int | float | None) -> str:
    """'1 B', '4 KiB', '1.5 MiB': exact for powers of two, 3 significant digits otherwise."""
    if _missing(num_bytes):
        return "-"
    value = float(num_bytes)  # type: ignore[arg-type]
    unit = 0
    while value >= 1024 and unit < len(_BINARY_UNITS) - 1:
        value /= 1024
        unit += 1
    text = f"{value:.0f}" if value == int(value) else f"{value:.3g}"
    return f"{text} {_BINARY_UNITS[unit]}"


def format_size_range(low: int, high: int) -> str:
    """'16 MiB', '4–32 KiB', '4 KiB–256 MiB': one unit written once where both ends share it."""
    lo_text, hi_text = format_size(low), format_size(high)
    if low == high:
        return hi_text
    if lo_text.split()[1] == hi_text.split()[1]:
        lo_text = lo_text.split()[0]
    return f"{lo_text}–{hi_text}"


def format_gbps(gbps: float | None) -> str:
    if _missing(gbps):
        return "-"
    return f"{gbps:.3g} GB/s" if gbps < 100 else f"{gbps:,.0f} GB/s"  # type: ignore[operator]


def format_latency_us(us: float | None) -> str:
    """Latency given in microseconds, shown in ns, us or ms."""
    if _missing(us):
        return "-"
    assert us is not None
    if us < 1:
        return f"{us * 1e3:.3g} ns"
    if us < 1e3:
        return f"{us:.3g} us"
    return f"{us / 1e3:.3g} ms"


def format_value(x: float, metric: str) -> str:
    """A record's headline figure: bandwidth in GB/s, latency in time units."""
    return format_gbps(x) if metric == "bandwidth" else format_latency_us(x)


def format_ratio(x: float) -> str:
    """'1.08×', '0.57×', '177×'; below 0.1 two significant digits ('0.0012×'), never '0.00×'."""
    if x >= 10:
        return f"{x:.3g}×"
    return f"{x:.2f}×" if x >= 0.1 else f"{x:.2g}×"


def format_percent(fraction: float | None) -> str:
    """'88%', '5.1%', '<0.1%': never '0.0%', which reads as nothing measured (an 8 B collective
    moves 0.0001% of a link's peak)."""
    if _missing(fraction):
        return "-"
    assert fraction is not None
    if 0 < fraction < 0.00095:
        return "<0.1%"
    return f"{fraction * 100:.0f}%" if fraction >= 0.1 else f"{fraction * 100:.1f}%"


def numa_nodes_text(nodes: list[int] | None) -> str:
    """"1 NUMA node (0)", "2 NUMA nodes (0, 1)": a bare "NUMA nodes 0" reads as none."""
    nodes = list(nodes or [])
    if not nodes:
        return "unknown"
    return f"{len(nodes)} NUMA node{'' if len(nodes) == 1 else 's'} ({', '.join(map(str, nodes))})"


def memory_peak_text(peak: dict | None) -> str:
    """The host's DRAM peak as the engine states it (host.memory_peak): figure and how it was
    found, or that it is unknown and why."""
    if not peak:
        return "not stated (an engine from before it looked)"
    if peak.get("gbps"):
        return f"{peak['gbps']:.4g} GB/s ({peak.get('source', '')})"
    return f"unknown: {peak.get('unknown', 'no reason given')}"
