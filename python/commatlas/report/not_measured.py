"""What a run did not measure, grouped for reading: one row per benchmark, variant and reason, with
the sizes it covers. A run can skip thousands of points, and one cause (a library without GPU support,
a variant whose bytes took another route) fails every size of a variant: a row each repeated it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from commatlas.io.results import Point
from commatlas.units import format_size

MAX_SIZES_LISTED = 8


@dataclass(frozen=True)
class NotMeasured:
    benchmark: str
    variant: str
    sizes: str
    reason: str


def variant_text(p: Point) -> str:
    return ", ".join(f"{k}={v}" for k, v in p.params_key) or "-"


def not_measured(points: list[Point], why: Callable[[Point], str],
                 variant: Callable[[Point], str] = variant_text) -> list[NotMeasured]:
    """The points grouped by benchmark, `variant(point)` and `why(point)`, in the order they first appear."""
    rows: dict[tuple[str, str, str], list[int | None]] = {}
    for p in points:
        rows.setdefault((p.benchmark, variant(p), why(p)), []).append(p.bytes)
    out = []
    for (bench, variant, reason), sizes in rows.items():
        known = sorted(s for s in sizes if s is not None)
        text = "all" if not known else ", ".join(format_size(s) for s in known[:MAX_SIZES_LISTED]) + (
            f" … ({len(known)} sizes)" if len(known) > MAX_SIZES_LISTED else "")
        out.append(NotMeasured(bench, variant, text, reason))
    return out
