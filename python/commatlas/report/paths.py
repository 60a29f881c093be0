"""Which series move data between the same endpoints, so that comparing them is fair.

A series' parameters split in two: endpoint parameters say where the bytes start and end
(devices, NUMA nodes, allocators, direction), the rest say how they are moved (threads, engine,
window). Series of one category and metric with equal endpoints form a Path; only they compete.
"""
from __future__ import annotations

from dataclasses import dataclass

from commatlas.results import Series

ENDPOINT_KEYS = frozenset({
    "src", "dst", "src_device", "dst_device", "device", "peer", "src_gpu", "dst_gpu",
    "src_numa", "dst_numa", "numa", "cpu_numa", "mem_numa", "src_memory", "dst_memory", "memory",
    "src_allocator", "dst_allocator", "allocator", "direction", "first_touch", "placement",
})
# Parameters naming one device or NUMA node by number; plots show one representative pair.
INDEX_KEYS = ("src", "dst", "src_device", "dst_device", "device", "peer", "src_gpu", "dst_gpu")


@dataclass(frozen=True, order=True)
class PathKey:
    category: str
    metric: str
    endpoints: tuple[tuple[str, str], ...]
    ranks: int
    operation: str  # collective operation, "" otherwise

    def label(self) -> str:
        parts = [f"{k}={v}" for k, v in self.endpoints]
        if self.operation:
            parts.insert(0, self.operation)
        if self.ranks > 1:
            parts.append(f"{self.ranks} ranks")
        return ", ".join(parts) if parts else "all endpoints alike"

    def anchor(self) -> str:
        return "path-" + slug(f"{self.category}-{self.metric}-{self.label()}")


def _reading_order(item: tuple[str, str]) -> tuple[int, str]:
    key = item[0]
    return (0 if key.startswith("src") else 1 if key.startswith("dst") else 2, key)


def path_of(series: Series) -> PathKey:
    endpoints = tuple(sorted(((k, v) for k, v in series.key[1] if k in ENDPOINT_KEYS), key=_reading_order))
    coll = series.first.collective
    return PathKey(series.first.category, series.first.metric, endpoints, series.ranks, coll.operation if coll else "")


def how_params(series: Series) -> tuple[tuple[str, str], ...]:
    return tuple((k, v) for k, v in series.key[1] if k not in ENDPOINT_KEYS)


def contender(series: Series) -> str:
    """How a series moves data, as named in the best-interface map: interface, then variant."""
    how = ", ".join(f"{k}={v}" for k, v in how_params(series))
    return f"{series.first.interface} [{series.benchmark}" + (f", {how}]" if how else "]")


def path_class(path: PathKey) -> tuple[tuple[str, str], ...]:
    """The endpoints with device numbers replaced by their role: i for the source, j for another
    device, so that every GPU pair of one kind lands in one plot."""
    values = dict(path.endpoints)
    src = values.get("src", values.get("src_device", values.get("src_gpu")))
    out = []
    for k, v in path.endpoints:
        if k in INDEX_KEYS and v.lstrip("-").isdigit():
            v = "i" if k.startswith("src") or v == src else "j"
        out.append((k, v))
    return tuple(out)


def is_indexed(path: PathKey) -> bool:
    return any(k in INDEX_KEYS and v.lstrip("-").isdigit() for k, v in path.endpoints)


def slug(text: str) -> str:
    """An HTML anchor made from any label."""
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")[:120]
