"""Cache residency of latency points, decided from what the machine shows.

The engine marks a point cache-resident when its working set fits the nominal cache (the CPU's
last-level cache as sysfs states it, a GPU's L2): a capacity answer. For a bandwidth that is the
best there is, but a dependent-load chase tells more: a 16 MiB chase that reads 150 ns on a CPU
with a 32 MiB last-level cache, where 64 KiB reads 2 ns and 256 MiB 190 ns, was not served by the
cache, whatever its capacity says (a VM's page walks, a cache split between core complexes, a
sysfs figure for the whole package).

A latency sweep (one benchmark, one variant, several sizes) carries its own two levels: its
smallest size, the nearest cache, and its largest size, where the working set exceeds the nominal
cache and so is memory. A point between them whose engine answer was "cache-resident" is measured
against the two: at or above their midpoint it is memory-resident, below it stays in cache. Its
movement then says `residency = "measured"` and why. A sweep without a size beyond the nominal cache
has no memory level to compare with and keeps the capacity answer (`residency = "capacity"`).
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import TYPE_CHECKING

from commatlas.io.points import params_key
from commatlas.units import format_latency_us, format_size

if TYPE_CHECKING:
    from commatlas.io.results import Result, Run

LATENCY_OPERATION = "load_latency"


def _sweep_key(r: Result) -> tuple:
    assert r.movement is not None
    return r.benchmark, params_key(r.params), r.ranks, r.repeat


def measure_residency(run: Run) -> None:
    """Replaces, in place, the movement of each latency chase point whose residency its sweep
    decides (see the module's text)."""
    sweeps: dict[tuple, list[Result]] = defaultdict(list)
    for r in run.results:
        if r.movement is not None and r.movement.operation == LATENCY_OPERATION and r.bytes and r.latency_us > 0:
            sweeps[_sweep_key(r)].append(r)
    for points in sweeps.values():
        by_size: dict[int, list[Result]] = defaultdict(list)
        for r in points:
            by_size[int(r.bytes or 0)].append(r)
        sizes = sorted(by_size)
        if len(sizes) < 3:
            continue
        largest = by_size[sizes[-1]]
        if any(r.movement.cache_resident for r in largest):  # type: ignore[union-attr]
            continue  # no size beyond the nominal cache: nothing measured says where memory is
        low = min(r.latency_us for r in by_size[sizes[0]])
        high = min(r.latency_us for r in largest)
        if high <= low:
            continue
        middle = (low + high) / 2
        for size in sizes[1:-1]:
            for r in by_size[size]:
                m = r.movement
                assert m is not None
                if not m.cache_resident:
                    continue
                memory = r.latency_us >= middle
                why = (f"{format_latency_us(r.latency_us)} at {format_size(size)} is "
                       f"{'at or above' if memory else 'below'} the midpoint of this sweep's "
                       f"{format_latency_us(low)} at {format_size(sizes[0])} (cache) and "
                       f"{format_latency_us(high)} at {format_size(sizes[-1])} (memory)")
                r.movement = dataclasses.replace(m, cache_resident=not memory, residency="measured",
                                                 residency_why=why)
