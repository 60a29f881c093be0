"""The key of a point: which benchmark, with which parameters, at how many ranks and bytes. Every
reader that matches points (series, compare, repeats, the harness and tuning answers, residency)
builds it here, and so do the records Python writes, in the string form the engine gives each of
its records (`point`, engine/core/records.cpp point_key)."""

from __future__ import annotations

import json
from typing import Any, Container, Mapping, Protocol

ParamsKey = tuple[tuple[str, str], ...]
SeriesKey = tuple[str, ParamsKey, int]            # benchmark, parameters, ranks: one curve
PointKey = tuple[str, ParamsKey, int, int | None]  # and the size: one point of it


class Keyed(Protocol):
    benchmark: str
    ranks: int
    bytes: int | None

    @property
    def params_key(self) -> ParamsKey: ...


def params_key(params: Mapping[str, Any], mpi_library: str = "") -> ParamsKey:
    """Parameters as sorted (name, text) pairs. One run may hold the same point under several MPI
    libraries (commatlas run --mpi a,b): then they are different points."""
    key = tuple(sorted((k, str(v)) for k, v in params.items()))
    return key + (("mpi_library", mpi_library),) if mpi_library else key


def series_key(point: Keyed, leave_out: Container[str] = ()) -> SeriesKey:
    """`leave_out`: parameter names not told apart (compare's run settings, which differ between
    two runs by design)."""
    return point.benchmark, tuple(kv for kv in point.params_key if kv[0] not in leave_out), point.ranks


def point_key(point: Keyed, leave_out: Container[str] = ()) -> PointKey:
    return (*series_key(point, leave_out), point.bytes)


def engine_point_key(benchmark: str, params: Mapping[str, Any], size: int, ranks: int, repeat: int | None) -> str:
    """The engine's form: benchmark|k=json,...|bytes|ranks[|rN]."""
    text = ",".join(f"{k}={json.dumps(v)}" for k, v in params.items())
    return f"{benchmark}|{text}|{size}|{ranks}" + (f"|r{repeat}" if repeat is not None else "")
