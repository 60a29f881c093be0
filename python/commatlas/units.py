"""How sizes and rates are written for people: binary sizes (KiB, MiB), GB/s = 1e9 B/s."""

from __future__ import annotations

_BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def format_size(num_bytes: int | float | None) -> str:
    """'1 B', '4 KiB', '1.5 MiB': exact for powers of two, 3 significant digits otherwise."""
    if num_bytes is None:
        return "-"
    value = float(num_bytes)
    unit = 0
    while value >= 1024 and unit < len(_BINARY_UNITS) - 1:
        value /= 1024
        unit += 1
    text = f"{value:.0f}" if value == int(value) else f"{value:.3g}"
    return f"{text} {_BINARY_UNITS[unit]}"


def format_gbps(gbps: float | None) -> str:
    if gbps is None:
        return "-"
    return f"{gbps:.3g} GB/s" if gbps < 100 else f"{gbps:.0f} GB/s"


def format_latency_us(us: float | None) -> str:
    """Latency with a unit chosen so that the figure has a few digits before the point."""
    if us is None:
        return "-"
    if us < 1:
        return f"{us * 1e3:.3g} ns"
    if us < 1e3:
        return f"{us:.3g} us"
    return f"{us / 1e3:.3g} ms"
