"""The run's answers, computed once from the movement model: per movement and size bin, which
mechanism (with which allocator and choices) moves the bytes fastest, by how much, and how close
to the hardware. Written as answers.json in the run folder (docs/answers.md,
schema/answers.schema.json); the report, the terminal summary and `commatlas compare` read it.

Rules (docs/answers.md says them for users):
- Alternatives compete only within one movement: same operation, direction, metric, from place,
  to place, the mover where it is off both places, and for collectives the number of participants.
  A place is memory kind + GPU index / NUMA node (+ processor for read, write and load latency).
  Allocator, first touch, mechanism, launch and the other choices are what competes.
- On one node a GPU's memory is one place whichever process owns the buffer: a message from rank
  0's buffer on GPU 0 to rank 1's on GPU 1 competes with a copy from GPU 0 to GPU 1, send/recv
  with copy (uni with uni, bi with bi), a ping-pong's half round trip with a copy's latency. The
  rank stays in the place for host buffers of a rank, across nodes, and for two ranks sharing a GPU.
- A copy kernel run by a GPU whose memory is neither place (GPU 0 copying within GPU 1, or within
  host memory) is a movement of its own: its bytes cross the GPU's link twice.
- Collectives key by their participants (the engine's `movement.participants`; for older records
  the run's ranks, or the GPUs of a single-process NCCL launch), not by how many processes ran.
- On a host with one NUMA node (the run's meta says so, and no record names another) all host
  memory is on that node: a buffer the engine placed there (numa 0) and one it did not place
  (numa null: pinned memory, MPI buffers) are one place, keyed without the node. With several
  nodes, a known node and an unknown one stay apart.
- Bins: one per ×4 of size, the first "≤ 4 KiB". A cell compares contenders at one size: the
  size of the bin that the most contenders measured (the largest of those on a tie).
- A cache-resident figure is never a cell's winner; a cell with only such figures is marked
  cache-resident and shows the best of them apart (`cache_figure`, no fraction of peak).
- The runner-up is the best contender of another mechanism or allocator than the winner's (a
  different kernel shape of the same mechanism is not an alternative a user weighs).
- A win is clear when the winner's p5–p95 range does not overlap the runner-up's; crossovers
  between mechanisms are read only between clear cells.
- Records without a movement (written before the engine declared one) and reference loops
  take no part; the file says how many were left out.
- Where one operation is measured in several launch modes (the `launch_mode` choice: launch
  included, back to back, CUDA graph, persistent kernel), the map keeps the mode a user of that
  mechanism would use (USER_LAUNCH_MODES) and `launch_modes` holds every mode side by side, from
  which the findings say what a launch costs.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commatlas.analysis.findings import find_answers
from commatlas.analysis.keys import COLLECTIVES, Bin, MoveKey, Places, bin_index, make_bin, move_key, numa_view, place_json, places_of
from commatlas.analysis.labels import movement_label
from commatlas.analysis.ranking import Contender, contender_of, crossovers, fastest_allocator, ranked_cells, value_of
from commatlas.analysis.tuning import tuning_answers
from commatlas.io.outputs import write_atomically
from commatlas.io.results import Movement, Result, Run, load_run

# The launch a user of each mechanism would use: an application waits for its copy, enqueues NCCL
# calls back to back on a stream, and runs GPU-initiated stores (its own, NCCL's device API, or
# NVSHMEM's puts) from a kernel that is already running. The map shows these; the other modes are in
# `launch_modes`.
USER_LAUNCH_MODES = {"gpu_initiated": "persistent", "nccl_device": "persistent", "nvshmem": "persistent",
                     "nccl": "back_to_back"}
DEFAULT_USER_LAUNCH_MODE = "launch_included"

FORMAT = "commatlas-answers/2"
ANSWERS_FILE = "answers.json"


@dataclass
class MovementData:
    key: MoveKey
    movement: Movement  # of the first record seen (its places; mechanism varies)
    places: Places
    label: str = ""
    numa: bool = True  # whether its places are keyed (and written) with their NUMA node
    contenders: dict[Contender, dict[int, Result]] = field(default_factory=dict)

    @property
    def metric(self) -> str:
        return self.key.metric

    @property
    def operations(self) -> set[str]:
        """The operations its records declared (a copy row may hold send/recv and ping-pongs)."""
        return {r.movement.operation for points in self.contenders.values() for r in points.values() if r.movement}


def collect(run: Run) -> tuple[list[MovementData], dict[str, int]]:
    """Results grouped by movement and contender; counts of what took no part, and why."""
    numa = numa_view(run)
    table: dict[MoveKey, MovementData] = {}
    left_out = {"no_movement": 0, "reference": 0, "unverified": 0}
    for r in run.results:
        m = r.movement
        if m is None:
            left_out["no_movement"] += 1
            continue
        if m.reference_of or r.category == "reference" or m.operation == "nothing" or m.mechanism == "harness":
            left_out["reference"] += 1
            continue
        if not r.verified_ok:
            left_out["unverified"] += 1
            continue
        if r.bytes is None or not math.isfinite(value_of(r)) or value_of(r) <= 0:
            continue
        mode = dict(m.choices).get("launch_mode")
        if mode and mode != user_launch_mode(m.mechanism):
            left_out["other_launch_mode"] = left_out.get("other_launch_mode", 0) + 1
            continue
        key = move_key(r, numa.keyed)
        data = table.get(key)
        if data is None:
            data = table[key] = MovementData(key, m, places_of(m, numa.keyed), numa=numa.keyed)
        data.contenders.setdefault(contender_of(r), {})[r.bytes] = r  # a repetition keeps the later record
    for data in table.values():
        data.label = movement_label(data.key, data.places, numa.named, data.operations == {"ping_pong"})
    return sorted(table.values(), key=lambda d: _row_order(d)), left_out


def user_launch_mode(mechanism: str) -> str:
    return USER_LAUNCH_MODES.get(mechanism, DEFAULT_USER_LAUNCH_MODE)


def launch_modes(run: Run) -> list[dict[str, Any]]:
    """Every operation measured in several launch modes: per benchmark, mechanism, other choices
    and size, the figure (us) of each mode, and the mode the map shows."""
    numa = numa_view(run)
    groups: dict[tuple, dict[str, Any]] = {}
    for r in run.results:
        m = r.movement
        if m is None or not r.verified_ok or r.bytes is None or r.metric != "latency":
            continue
        choices = dict(m.choices)
        mode = choices.pop("launch_mode", None)
        value = value_of(r)
        if not mode or not math.isfinite(value) or value <= 0:
            continue
        key = (r.benchmark, m.mechanism, tuple(sorted(choices.items())), r.bytes)
        group = groups.setdefault(key, {
            "benchmark": r.benchmark, "mechanism": m.mechanism, "choices": dict(sorted(choices.items())),
            "bytes": r.bytes, "movement": move_key(r, numa.keyed).text(), "map_mode": user_launch_mode(m.mechanism),
            "us": {}})
        group["us"][mode] = value
    return [groups[k] for k in sorted(groups, key=lambda k: (k[0], k[1], k[2], k[3]))
            if len(groups[k]["us"]) > 1]


def _row_order(d: MovementData) -> tuple:
    """Host↔GPU first, then within/between GPUs, CPU memory, ranks, collectives (the study's order)."""
    a, b = d.places.source, d.places.target
    if d.key.operation in COLLECTIVES:
        group = 6
    elif (a and a.rank is not None) or (b and b.rank is not None):
        group = 5
    elif a and b and a.memory == "host" and b.memory == "host":
        group = 4
    elif a and b and a.memory != b.memory:
        group = 0 if d.key.operation == "copy" else 2
    else:
        group = 1 if d.key.operation == "copy" else 3
    return (group, d.key.metric != "bandwidth", d.key.operation, d.key.direction, d.key.source, d.key.target,
            d.key.by, d.key.participants, d.key.remote)


def movement_answer(d: MovementData, bins: list[Bin]) -> dict[str, Any]:
    cells = ranked_cells(bins, d.contenders, d.metric)
    by_allocator: dict[str, list[dict[str, Any]]] = {}
    allocators = sorted({c.allocator for c in d.contenders})
    if len(allocators) > 1:
        for name in allocators:
            mine = {c: p for c, p in d.contenders.items() if c.allocator == name}
            by_allocator[name] = ranked_cells(bins, mine, d.metric)
    # MPI libraries compete as allocators do (commatlas run --mpi a,b): each one's own view.
    by_library: dict[str, list[dict[str, Any]]] = {}
    libraries = sorted({c.library for c in d.contenders} - {""})
    if len(libraries) > 1:
        for name in libraries:
            mine = {c: p for c, p in d.contenders.items() if c.library == name}
            by_library[name] = ranked_cells(bins, mine, d.metric)
    m = d.movement
    return {"key": d.key.text(), "label": d.label, "operation": d.key.operation, "direction": d.key.direction,
            "metric": d.metric, "from": place_json(d.places.source, d.numa), "to": place_json(d.places.target, d.numa),
            "by": place_json(d.places.by, d.numa), "participants": d.key.participants or None,
            "same_node": m.same_node, "mechanisms": sorted({c.mechanism for c in d.contenders}),
            "allocators": allocators, "fastest_allocator": fastest_allocator(cells), "cells": cells,
            "crossovers": crossovers(cells), "by_allocator": by_allocator,
            "libraries": libraries, "fastest_library": fastest_allocator(cells, "library") if len(libraries) > 1 else None,
            "by_library": by_library}


# --- the whole file --------------------------------------------------------------------------

def compute_answers(run: Run | str | Path) -> dict[str, Any]:
    """The answers of one run, in the answers.json format (FORMAT)."""
    if not isinstance(run, Run):
        run = load_run(run)
    data, left_out = collect(run)
    sizes = [s for d in data for p in d.contenders.values() for s in p]
    bins = [make_bin(i) for i in range(bin_index(max(sizes)) + 1)] if sizes else []
    movements = [movement_answer(d, bins) for d in data]
    answers: dict[str, Any] = {
        "format": FORMAT,
        "run": (run.meta or {}).get("run_id") or run.directory.name,
        "bins": [{"label": b.label, "min_bytes": b.min_bytes, "max_bytes": b.max_bytes} for b in bins],
        "left_out": left_out,
        "movements": movements,
    }
    modes = launch_modes(run)
    if modes:
        answers["launch_modes"] = modes
    answers["findings"] = find_answers(answers)
    answers["tuning"] = tuning_answers(run)
    return answers


def write_answers(run: Run, answers: dict[str, Any] | None = None, out_dir: Path | None = None) -> Path:
    answers = answers if answers is not None else compute_answers(run)
    path = (out_dir or run.directory) / ANSWERS_FILE
    write_atomically(path, json.dumps(answers, indent=1, ensure_ascii=False, allow_nan=False) + "\n")
    return path


def load_answers(path: str | Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))
