"""The best-interface map as shown (report, summary.md, terminal), read from the answers: one row
per movement, one column per size bin, each cell the winning mechanism with its figure and
fraction of peak (in the manner of the MI300A study's Figure 17).

Movements of one kind whose winners agree bin by bin (GPU 0 → 1 and GPU 1 → 0, say) are one
row, which names the GPUs it stands for. Sizes shown are the sizes measured (each cell's `bytes`),
never a bin's bounds: a column is headed by the size most of its cells compared at (another of
its sizes where that one already heads the column before it), and a cell at another size names
its own. Cache-resident cells keep their own style and never hold a winner, but
name their fastest mechanism ("copy engine (in cache)"). The fixed-allocator view shows, per
movement, only the contenders of one allocator: the one named, or the fastest.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from commatlas.analysis.findings import anchor_of, mechanism_name, row_class
from commatlas.io.engine import normalise_mpi_name
from commatlas.units import format_gbps, format_latency_us, format_percent, format_ratio, format_size, format_size_range
# One colour per mechanism, as the engine's vocabulary declares it (fixed so that runs read alike).
from commatlas.io.vocabulary import MECHANISM_COLOURS

CACHE_COLOUR = "#eeeeee"
MAX_NAMED = 6  # a merged row names the GPUs of at most this many movements


def colour(mechanism: str) -> str:
    return MECHANISM_COLOURS.get(mechanism, "#c5b0d5")


@dataclass(frozen=True)
class MapCell:
    mechanism: str  # the winner's; for a cache-resident cell the fastest of its cache figures
    figure: str  # "55.4 GB/s"
    fraction: str  # "88%", or "" without a known peak (always for a cache figure)
    cache: bool  # only cache-resident figures here: no winner, but the fastest is still named
    clear: bool | None
    detail: str  # the winner's choices, the runner-up and the margin (a tooltip)
    bytes: int = 0  # the size its contenders were compared at
    # Only one mechanism measured this size, in a movement where others measured other sizes: the
    # winner had no rival here, which a plain "fastest" would hide (families sweep different sizes).
    alone: bool = False
    # The winner's figure did not repeat in a later batch (the machine changed state): not crowned.
    unstable: bool = False
    # The host got in the way of every pass of the winner's figure (steal, other processes): the
    # passes agreed on the machine's state, so it is not crowned either.
    busy: bool = False
    library: str = ""  # the winner's MPI library, where libraries compete in its movement

    @property
    def size(self) -> str:
        return format_size(self.bytes)

    @property
    def name(self) -> str:
        """The mechanism; "copy engine (in cache)" where every figure of the cell is a cache figure."""
        return (mechanism_name(self.mechanism) + (f" ({self.library})" if self.library else "")
                + (" (in cache)" if self.cache else "") + (" (alone)" if self.alone else "")
                + (" (unstable)" if self.unstable else "") + (" (host busy)" if self.busy else ""))

    @property
    def colour(self) -> str:
        return CACHE_COLOUR if self.cache else colour(self.mechanism)


@dataclass
class MapRow:
    label: str
    anchor: str
    keys: list[str]
    cells: list[MapCell | None]  # aligned with the bins
    also: list[str] = field(default_factory=list)  # labels of the other movements of this row
    kind: str = ""  # the label with GPU numbers as roles (GPU i → GPU j)
    first: str = ""  # the label of the movement the row was started by

    @property
    def short(self) -> str:
        """The row's name in a narrow place: the kind and which GPUs it stands for ("GPU i → GPU j
        (i,j = 0,1; 1,0)"), or how many movements where that would not fit."""
        if not self.also:
            return self.label
        gpus = [re.findall(r"GPU (\d+)", label) for label in [self.first] + self.also]
        roles = "ij"[:len(gpus[0])]
        if 0 < len(gpus[0]) <= 2 and len(gpus) <= MAX_NAMED and all(len(g) == len(gpus[0]) for g in gpus):
            return f"{self.kind} ({','.join(roles)} = " + "; ".join(",".join(g) for g in gpus) + ")"
        return f"{self.kind} (×{len(self.keys)})"


HOST_MEMORY_PEAK_PREFIX = "no host memory peak: "


def host_memory_peak_line(run: Any) -> str:
    """One line for the screen where the run's host-memory bandwidths have no % of peak: the host
    memory peak is unknown, and the true reason (the engine's, from the machine's SMBIOS tables),
    said once rather than in every row's record."""
    reasons = [r.peak.unknown for r in run.results
               if r.peak and r.peak.unknown.startswith(HOST_MEMORY_PEAK_PREFIX)
               and not (r.movement and r.movement.cache_resident)]
    if not reasons:
        return ""
    host = ((run.meta or {}).get("engine") or {}).get("host") or {}
    why = (host.get("memory_peak") or {}).get("unknown") or reasons[0][len(HOST_MEMORY_PEAK_PREFIX):]
    return f"% of peak: the host memory peak is unknown: {why}"


def _figure(choice: dict[str, Any]) -> str:
    v = choice["value"]
    if choice["unit"] == "us":
        return format_latency_us(v)
    return format_gbps(v)


def _includes(choice: dict[str, Any]) -> str:
    """What one timed operation of a latency covers: contenders of one latency row are timed
    differently (a copy with its launch and synchronisation, a ping-pong's half round trip)."""
    return f" (timed: {choice['includes']})" if choice.get("includes") and choice["unit"] == "us" else ""


LAUNCH_WORDS = {"rank_per_gpu": "one rank per GPU", "single_process": "one process driving every GPU"}


def contender_words(choice: dict[str, Any]) -> str:
    """The mechanism as a user picks it: "NCCL, one rank per GPU" where the launch is a choice."""
    launch = choice["choices"].get("launch")
    return mechanism_name(choice["mechanism"]) + (f", {LAUNCH_WORDS.get(launch, launch)}" if launch else "")


def _detail(cell: dict[str, Any]) -> str:
    w = cell["winner"] or cell["cache_figure"]
    parts = [f"{contender_words(w)} ({w['benchmark']}; "
             + ", ".join(f"{k}={v}" for k, v in w["choices"].items()) + f") at {cell['bytes']} B" + _includes(w)]
    if cell["cache_resident"]:
        parts.append("cache-resident: every figure here can live in a cache; no winner")
    if w.get("residency"):
        parts.append(("in cache" if cell["cache_resident"] else "memory-resident") + f" by measurement: {w['residency']}")
    if cell.get("unstable"):
        parts.append("did not repeat: a later batch of " + " and ".join(mechanism_name(m) for m in cell["unstable"])
                     + " disagreed with the first, so no winner is claimed here")
        parts += [f"{mechanism_name(c['mechanism'])}: {c['host_witness']}" for c in (cell["winner"], cell["runner_up"])
                  if c and c.get("host_witness")]
    if cell.get("host_busy"):
        parts.append("the host got in the way of every pass of " + " and ".join(
            f"{mechanism_name(c['mechanism'])} ({c['host_busy']})" for c in (cell["winner"], cell["runner_up"])
            if c and c.get("host_busy")) + ": its figure is the machine's, so no winner is claimed here")
    if cell["runner_up"]:
        r = cell["runner_up"]
        parts.append(f"runner-up {contender_words(r)} [{r['allocator']}] {_figure(r)}, "
                     f"margin {format_ratio(cell['margin'])}" + ("" if cell["clear"] else " (inside the spread)")
                     + _includes(r))
    return "; ".join(parts)


def map_cell(cell: dict[str, Any] | None, rivals: bool = False, libraries: bool = False) -> MapCell | None:
    """`rivals`: the movement has more than one mechanism somewhere in its sweep; `libraries`:
    more than one MPI library (the winner's is named)."""
    if cell is None:
        return None
    w = cell["winner"]
    if w is None:
        c = cell["cache_figure"]
        return MapCell(c["mechanism"], _figure(c), "", True, None, _detail(cell), cell["bytes"])
    known = w["peak_fraction"] is not None and w["unit"] != "us"  # a latency is no fraction of a bandwidth
    fraction = format_percent(w["peak_fraction"]) if known else ""
    alone = rivals and len(cell["best_by_mechanism"]) < 2
    unstable = w.get("stability") == "unstable"
    library = w["choices"].get("mpi_library", "") if libraries else ""
    return MapCell(w["mechanism"], _figure(w), fraction, False, cell["clear"], _detail(cell), cell["bytes"], alone,
                   unstable, bool(w.get("host_busy")), library)


def _aligned(cells: list[dict[str, Any]], bins: list[str], rivals: bool = False,
             libraries: bool = False) -> list[MapCell | None]:
    by_bin = {c["bin"]: c for c in cells}
    return [map_cell(by_bin.get(b), rivals, libraries) for b in bins]


def map_rows(answers: dict[str, Any], allocator: str | None = None, fixed: bool = False) -> tuple[list[MapRow], list[str]]:
    """The rows of the map; with `fixed`, the view of one allocator per movement (`allocator`, or
    each movement's fastest). Returns the rows and notes on movements the view leaves out."""
    bins = [b["label"] for b in answers["bins"]]
    rows: list[MapRow] = []
    by_kind: dict[tuple, MapRow] = {}
    notes = []
    for mv in answers["movements"]:
        cells, label = mv["cells"], mv["label"]
        if fixed:
            chosen = _allocator_of(mv, allocator)
            if chosen is None:
                notes.append(f"{label}: not measured with {allocator}")
                continue
            cells = mv["by_allocator"].get(chosen, cells)
            label = f"{label} [{chosen}]"
        aligned = _aligned(cells, bins, len(mv.get("mechanisms") or []) > 1, len(mv.get("libraries") or []) > 1)
        kind = (row_class(label), tuple((c.mechanism, c.cache, c.alone, c.unstable, c.busy) if c else None
                                        for c in aligned))
        row = by_kind.get(kind)
        if row is not None:
            row.keys.append(mv["key"])
            row.also.append(label)
            continue
        row = MapRow(label, anchor_of(mv["key"]), [mv["key"]], aligned, kind=kind[0], first=label)
        by_kind[kind] = row
        rows.append(row)
    for row in rows:
        if row.also:
            row.label = f"{row_class(row.label)} ({len(row.also) + 1} alike: {row.label}; " + "; ".join(row.also) + ")"
    return rows, notes


def library_rows(answers: dict[str, Any], library: str | None = None) -> tuple[list[MapRow], list[str]]:
    """The map with the MPI library fixed: each movement where libraries compete, with only
    `library`'s contenders (or each movement's fastest library's), as the fixed-allocator view."""
    picked = []
    notes = []
    for mv in answers["movements"]:
        names = mv.get("libraries") or []
        if len(names) < 2:
            continue
        if library:
            chosen = next((n for n in names if normalise_mpi_name(library) in (normalise_mpi_name(n), normalise_mpi_name(n.rsplit(" ", 1)[0]))), None)
        else:
            chosen = mv.get("fastest_library")
        if chosen is None:
            notes.append(f"{mv['label']}: not measured with {library}")
            continue
        picked.append({**mv, "cells": mv["by_library"][chosen], "label": f"{mv['label']} [{chosen}]",
                       "libraries": [chosen]})
    rows, _ = map_rows({**answers, "movements": picked})
    return rows, notes


def _allocator_of(mv: dict[str, Any], wanted: str | None) -> str | None:
    if not wanted:
        return mv["fastest_allocator"] or (mv["allocators"][0] if mv["allocators"] else None)
    for name in mv["allocators"]:
        if wanted == name or wanted in name.split(" → "):
            return name
    return None


@dataclass(frozen=True)
class MapColumn:
    """A column of the grid: a bin some row has a cell in."""

    index: int  # into the bins, and so into every row's cells
    bytes: int  # the size most of its cells were compared at (the larger on a tie)
    bin: str  # the bin's label ("4–16 MiB"), for a tooltip

    @property
    def size(self) -> str:
        return format_size(self.bytes)


def map_columns(rows: list[MapRow], bins: list[str]) -> list[MapColumn]:
    """The grid's columns, headed by the sizes measured there; a bin no row measured in has none.
    A column is not headed by the size that heads the column before it when its cells measured
    another: a --quick run on 2x H100 measured 8 B both in the latency rows' smallest bin and in
    the bandwidth rows' first one, and its map read "8 B | 8 B" with the latency cells of the
    second column at 4 KiB."""
    out: list[MapColumn] = []
    for i, label in enumerate(bins):
        sizes = Counter(row.cells[i].bytes for row in rows if row.cells[i] is not None)
        if not sizes:
            continue
        before = out[-1].bytes if out else None
        fresh = {s: n for s, n in sizes.items() if s != before} or dict(sizes)
        out.append(MapColumn(i, max(fresh, key=lambda s: (fresh[s], s)), label))
    return out


@dataclass(frozen=True)
class Band:
    """Neighbouring cells with one winner: the terminal's condensed map. `low` and `high` are the
    sizes its first and last cell compared (what was measured, not the bins' bounds). Cells whose
    figures are all cache figures are a band of their own, named by their fastest mechanism."""

    low: int
    high: int
    name: str  # the mechanism
    figures: str  # "50–55 GB/s", with the fraction of peak where known; "... in cache" for cache figures

    @property
    def sizes(self) -> str:
        return format_size_range(self.low, self.high)


def bands(row: MapRow) -> list[Band]:
    out: list[Band] = []
    run: list[MapCell] = []

    def close() -> None:
        if not run:
            return
        figs = [c.figure for c in run]
        fraction = run[-1].fraction
        if len(set(figs)) == 1:
            text = figs[0]
        elif figs[0].endswith(" GB/s"):
            # The fraction shown is the best figure's own, so "up to X Y%" reads as X being Y% of peak.
            best = max(run, key=lambda c: float(c.figure.split()[0].replace(",", "")))
            text, fraction = f"up to {best.figure}", best.fraction
        else:
            text = f"{figs[0]}–{figs[-1]}"
        if fraction:
            text += f" {fraction}"
        if run[0].cache:
            text += " in cache"
        out.append(Band(run[0].bytes, run[-1].bytes, mechanism_name(run[0].mechanism)
                        + (f" ({run[0].library})" if run[0].library else "") + (" (alone)" if run[0].alone else "")
                        + (" (unstable)" if run[0].unstable else "") + (" (host busy)" if run[0].busy else ""),
                        text))
        run.clear()
    for cell in row.cells:
        if cell is None:
            continue
        if run and run[-1].name != cell.name:  # "copy engine (in cache)" is not "copy engine"
            close()
        run.append(cell)
    close()
    return out
