"""How numbers are written for people: sizes in binary units, rates in decimal GB/s."""
from __future__ import annotations

import math

_BINARY = ("B", "KiB", "MiB", "GiB", "TiB")


def format_size(n: float | None) -> str:
    if n is None or not math.isfinite(n):
        return "-"
    value, unit = float(n), 0
    while value >= 1024 and unit < len(_BINARY) - 1:
        value /= 1024
        unit += 1
    text = f"{value:.0f}" if value == int(value) else f"{value:.1f}"
    return f"{text} {_BINARY[unit]}"


def format_gbps(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    return f"{x:.3g} GB/s" if x < 1000 else f"{x:,.0f} GB/s"


def format_us(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    if x < 1:
        return f"{x * 1000:.3g} ns"
    if x >= 1e4:
        return f"{x / 1000:.3g} ms"
    return f"{x:.3g} µs"


def format_value(x: float, metric: str) -> str:
    return format_gbps(x) if metric == "bandwidth" else format_us(x)


def format_ratio(x: float) -> str:
    return f"{x:.2f}×" if x < 10 else f"{x:.3g}×"


def format_percent(fraction: float | None) -> str:
    if fraction is None or not math.isfinite(fraction):
        return "-"
    return f"{fraction * 100:.0f}%" if fraction >= 0.1 else f"{fraction * 100:.1f}%"
