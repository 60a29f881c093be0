"""The GPU pair matrices of a run's summary: per matrix benchmark and direction, rows = source
GPU, columns = destination GPU, each cell the bandwidth and its fraction of the path's peak.
The pair is the record's movement (from.gpu → to.gpu, both GPU memory); records without one
are not placed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.table import Table

from commatlas.units import format_gbps, format_size

MATRIX_BENCHMARKS = ("gpu.copy_ce_matrix", "gpu.copy_sm_matrix")
EMPTY = "—"


@dataclass(frozen=True)
class PairMatrix:
    benchmark: str
    direction: str
    gpus: list[int]
    cells: dict[tuple[int, int], dict[str, Any]]  # (src, dst) -> the record shown

    def cell(self, src: int, dst: int) -> str:
        record = self.cells.get((src, dst))
        if src == dst or record is None or record.get("bandwidth_gbps") is None:
            return EMPTY
        text = format_gbps(record["bandwidth_gbps"])
        fraction = (record.get("peak") or {}).get("fraction")
        return text + (f" {fraction:.0%}" if isinstance(fraction, (int, float)) else "")

    def rows(self) -> list[list[str]]:
        return [[self.cell(a, b) for b in self.gpus] for a in self.gpus]


def _pair(record: dict[str, Any]) -> tuple[int, int] | None:
    m = record.get("movement") or {}
    a, b = m.get("from") or {}, m.get("to") or {}
    if a.get("memory") == "gpu" and b.get("memory") == "gpu" and isinstance(a.get("gpu"), int) \
            and isinstance(b.get("gpu"), int):
        return a["gpu"], b["gpu"]
    return None


def pair_matrices(records: list[dict[str, Any]]) -> list[PairMatrix]:
    """One matrix per benchmark and direction; a pair measured at several sizes shows its
    largest size (the matrix benchmarks measure one)."""
    groups: dict[tuple[str, str], dict[tuple[int, int], dict[str, Any]]] = {}
    for r in records:
        if r.get("type") != "result" or r.get("benchmark") not in MATRIX_BENCHMARKS:
            continue
        pair = _pair(r)
        if pair is None:
            continue
        cells = groups.setdefault((r["benchmark"], str(r["movement"].get("direction", "-"))), {})
        kept = cells.get(pair)
        if kept is None or (r.get("bytes") or 0) >= (kept.get("bytes") or 0):
            cells[pair] = r
    out = []
    for (bench, direction), cells in sorted(groups.items()):
        gpus = sorted({g for pair in cells for g in pair})
        out.append(PairMatrix(bench, direction, gpus, cells))
    return out


def matrix_table(matrix: PairMatrix) -> Table:
    sizes = sorted({r.get("bytes") for r in matrix.cells.values() if r.get("bytes") is not None})
    at = ", ".join(format_size(s) for s in sizes) or "-"
    table = Table(title=f"{matrix.benchmark} ({matrix.direction}, {at}): GB/s, % of peak",
                  title_justify="left")
    table.add_column("src \\ dst")
    for g in matrix.gpus:
        table.add_column(f"GPU {g}", justify="right")
    for g, row in zip(matrix.gpus, matrix.rows()):
        table.add_row(f"GPU {g}", *row)
    return table
