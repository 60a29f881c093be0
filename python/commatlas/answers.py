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
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from commatlas.outputs import write_atomically
from commatlas.results import Endpoint, Movement, Result, Run, load_run
from commatlas.units import format_size, format_size_range
from commatlas.vocabulary import COMMUNICATOR_OPERATIONS

FORMAT = "commatlas-answers/2"
ANSWERS_FILE = "answers.json"
# The smallest messages are a column of their own, shown at the smallest size measured there: a
# 1 B ping-pong is the latency figure people look for, and a bin up to 4 KiB showed only 4 KiB.
SMALLEST_BIN_MAX = 64
FIRST_BIN_MAX = 4096
BIN_FACTOR = 4
# Operations over a communicator (collectives and patterns), from the engine's vocabulary.
COLLECTIVES = COMMUNICATOR_OPERATIONS


# --- size bins -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Bin:
    label: str
    min_bytes: int
    max_bytes: int


def bin_index(size: int) -> int:
    if size <= SMALLEST_BIN_MAX:
        return 0
    i, top = 1, FIRST_BIN_MAX
    while size > top:
        i, top = i + 1, top * BIN_FACTOR
    return i


def make_bin(i: int) -> Bin:
    if i == 0:
        return Bin(f"≤ {format_size(SMALLEST_BIN_MAX)}", 1, SMALLEST_BIN_MAX)
    top = FIRST_BIN_MAX * BIN_FACTOR ** (i - 1)
    low = SMALLEST_BIN_MAX if i == 1 else top // BIN_FACTOR
    return Bin(format_size_range(low, top), low + 1, top)  # "1–4 MiB", not "1 MiB–4 MiB"


# --- places and movement keys ----------------------------------------------------------------

def place_key(e: Endpoint | None, numa: bool = True) -> str:
    """`numa`: whether host places are told apart by NUMA node (False on a one-node host)."""
    if e is None:
        return "none"
    if e.memory == "gpu":
        text = "gpu" + ("" if e.gpu is None else str(e.gpu)) + (".sm" if e.processor else "")
    elif e.memory == "host":
        text = ("cpu" if e.processor else "host") + ("" if e.numa is None or not numa else f".numa{e.numa}")
    else:
        text = e.memory
    return (f"rank{e.rank}:" if e.rank is not None else "") + text


def place_json(e: Endpoint | None, numa: bool = True) -> dict[str, Any] | None:
    if e is None:
        return None
    out: dict[str, Any] = {"memory": e.memory}
    for name in ("gpu", "numa", "rank"):
        if getattr(e, name) is not None and (numa or name != "numa"):
            out[name] = getattr(e, name)
    if e.processor:
        out["processor"] = True
    return out


def rank_is_place(m: Movement, e: Endpoint) -> bool:
    """Whether the rank owning `e` is part of its place. On one node a GPU's memory is one place
    whichever process owns the buffer, so a message from rank 0's buffer on GPU 0 to rank 1's on
    GPU 1 is a move from GPU 0 to GPU 1 like any copy. The rank stays where it is the only name the
    record gives the memory (host buffers of a rank, a GPU buffer whose GPU is not known), across
    nodes (GPU 0 of one node is not GPU 0 of another), and between two ranks sharing one GPU (their
    staged MPI leaves the GPU and back: not a copy within that GPU, whose own copies are L2 figures
    at the sizes a message is timed at)."""
    if e.rank is None:
        return False
    if e.memory != "gpu" or e.gpu is None or m.same_node is False:
        return True
    other = m.target if e is m.source else m.source
    return bool(other and other.memory == "gpu" and other.gpu == e.gpu and other.rank is not None
                and other.rank != e.rank)


def mover_of(m: Movement) -> Endpoint | None:
    """The processor moving the bytes, where the engine declares it apart from the places
    (`movement.by`: the GPU whose SMs run gpu.stream_copy). Records written before engines declared
    it name that GPU only in the copy kernel's choice `gpu`: read there, for those records only."""
    if m.by is not None:
        return m.by
    if m.operation == "copy" and m.mechanism == "gpu_load_store":
        gpu = dict(m.choices).get("gpu")
        if gpu is not None and str(gpu).isdigit():
            return Endpoint("gpu", int(gpu), None, None, "", True, "", "")
    return None


def _mover_is_off(by: Endpoint, places: tuple[Endpoint | None, ...]) -> bool:
    """A mover is part of the movement only where it is neither place's own processor: GPU 0's SMs
    copying within GPU 1's memory (or host memory) cross the link twice; within GPU 0 they do not."""
    for e in places:
        if e is not None and e.memory == by.memory and (e.memory == "host" or e.gpu == by.gpu):
            return False
    return True


def kind_of(m: Movement) -> tuple[str, str]:
    """The operation and direction a movement competes under. A message from one place to another
    is a move like a copy: send/recv competes with copy, uni with uni and bi with bi; a ping-pong's
    half round trip (one message as an application sees it) with a copy's latency, which the
    engine times launch and synchronisation included (each record's `latency_includes` says what)."""
    if m.operation == "send_recv":
        return "copy", m.direction
    if m.operation == "ping_pong":
        return "copy", "uni" if m.direction == "half_round_trip" else m.direction
    return m.operation, m.direction


def participants_of(r: Result) -> int:
    """Members of a collective's communicator (0 for anything else): `movement.participants`; for
    records written before engines declared it, the run's ranks, or the GPUs one process drove
    (`launch` single_process over `params.gpus`)."""
    m = r.movement
    if m is None or m.operation not in COLLECTIVES:
        return 0
    if m.participants:
        return m.participants
    gpus = r.params.get("gpus")
    if dict(m.choices).get("launch") == "single_process" and isinstance(gpus, str) and gpus:
        return len(gpus.split(","))
    return r.ranks


@dataclass(frozen=True)
class Places:
    """Where a movement goes as the map tells places apart: each endpoint without what is a choice
    (allocator, first touch, node name), its NUMA node only where host places are told apart by
    node, its rank only where the rank is part of the place; and the mover where it is off both."""

    source: Endpoint | None
    target: Endpoint | None
    by: Endpoint | None


def places_of(m: Movement, numa: bool = True) -> Places:
    def place(e: Endpoint | None, keep_rank: bool) -> Endpoint | None:
        if e is None:
            return None
        return replace(e, numa=e.numa if numa else None, rank=e.rank if keep_rank else None, node="",
                       allocator="", first_touch="")

    source = place(m.source, m.source is not None and rank_is_place(m, m.source))
    target = place(m.target, m.target is not None and rank_is_place(m, m.target))
    by = mover_of(m)
    by = place(by, False) if by is not None and _mover_is_off(by, (m.source, m.target)) else None
    return Places(source, target, by)


@dataclass(frozen=True, order=True)
class MoveKey:
    """What may compete: everything about a movement except how it is done."""

    operation: str
    direction: str
    metric: str
    source: str
    target: str
    by: str  # the mover's place where it is off both places, else ""
    participants: int  # collectives: members of the communicator; 0 otherwise
    remote: bool  # the endpoints are on different nodes

    def text(self) -> str:
        key = f"{self.operation}|{self.direction}|{self.metric}|{self.source}->{self.target}"
        return key + (f"|by {self.by}" if self.by else "") + \
            (f"|{self.participants} ranks" if self.participants else "") + ("|inter-node" if self.remote else "")


def move_key(r: Result, numa: bool = True) -> MoveKey:
    m = r.movement
    assert m is not None
    where = places_of(m, numa)
    operation, direction = kind_of(m)
    return MoveKey(operation, direction, r.metric, place_key(where.source), place_key(where.target),
                   place_key(where.by) if where.by else "", participants_of(r), m.same_node is False)


@dataclass(frozen=True)
class NumaView:
    keyed: bool  # host places are told apart by NUMA node
    named: bool  # labels name the node (the host has several)


def numa_view(run: Run) -> NumaView:
    """How a run's host places read: one NUMA node makes every host buffer one place (see the
    module's rules); several keep each node, and an unplaced buffer, apart, and say which."""
    declared = {e.numa for r in run.results if r.movement for e in (r.movement.source, r.movement.target)
                if e is not None and e.numa is not None}
    nodes = (((run.meta or {}).get("engine") or {}).get("host") or {}).get("numa_nodes")
    nodes = set(nodes) if isinstance(nodes, list) else None
    one_node = nodes is not None and len(nodes) == 1 and declared <= nodes
    return NumaView(keyed=not one_node, named=len(declared) > 1 or (nodes is not None and len(nodes) > 1))


def _numa_words(e: Endpoint, numa: bool) -> str:
    return f" (NUMA {e.numa})" if numa and e.numa is not None else ""


def _memory_words(e: Endpoint, numa: bool) -> str:
    if e.memory == "gpu":
        return "GPU memory" if e.gpu is None else f"GPU {e.gpu}"
    if e.memory == "host":
        return "host memory" + _numa_words(e, numa)
    return e.memory


def _processor_words(e: Endpoint, numa: bool) -> str:
    if e.memory == "gpu":
        return "GPU" if e.gpu is None else f"GPU {e.gpu}"
    return "CPU" + _numa_words(e, numa)


def movement_label(key: MoveKey, where: Places, numa: bool = False, ping_pong: bool = False) -> str:
    """A map row's name as a user says it: "host memory → GPU 0", "GPU 0 reads host memory".
    `ping_pong`: every contender of a latency row is a ping-pong (said so where ranks are named)."""
    a, b = where.source, where.target
    op, metric = key.operation, key.metric
    latency = " (latency)" if metric == "latency" and op != "load_latency" else ""
    arrow = "⇄" if key.direction == "bi" else "→"
    if a is None or b is None:
        return op
    if op in COLLECTIVES:
        where_words = "GPU buffers" if a.memory == "gpu" else "host buffers"
        return f"{op}, {where_words}, {key.participants} ranks{latency}"
    if a.rank is not None or b.rank is not None:
        if a.memory == "gpu" and b.memory == "gpu":
            where_words = f"both on GPU {a.gpu}" if a.gpu is not None and a.gpu == b.gpu else "GPU buffers"
        elif a.memory == "host" and b.memory == "host":
            where_words = "host buffers"
        else:
            where_words = f"{_memory_words(a, numa)} → {_memory_words(b, numa)}"
        how = ", ping-pong" if ping_pong and metric == "latency" else latency
        return f"rank {a.rank} {arrow} rank {b.rank}, {where_words}" + ("" if op == "copy" else f", {op}") + how
    if where.by is not None:
        mover = _processor_words(where.by, numa)
        if place_key(a) == place_key(b):
            return f"{mover} copies within {_memory_words(a, numa)}{latency}"
        return f"{mover} copies {_memory_words(a, numa)} {arrow} {_memory_words(b, numa)}{latency}"
    if op in ("read", "write", "load_latency"):
        memory, cpu = (a, b) if op != "write" else (b, a)
        verb = {"read": "reads", "write": "writes", "load_latency": "load latency,"}[op]
        if memory.memory == "host" and cpu.memory == "host" and op != "load_latency" \
                and (not numa or memory.numa == cpu.numa):
            return f"CPU memory{_numa_words(memory, numa)}, {op}"
        return f"{_processor_words(cpu, numa)} {verb} {_memory_words(memory, numa)}"
    if a.memory == "gpu" and b.memory == "gpu" and a.gpu == b.gpu and a.gpu is not None:
        return f"within GPU {a.gpu}" + latency
    if a.memory == "host" and b.memory == "host" and (not numa or a.numa == b.numa):
        return f"CPU memory{_numa_words(a, numa)}, copy" + latency
    if key.direction == "one_to_all":
        return f"{_memory_words(a, numa)} → every other GPU (fan-out){latency}"
    if key.direction == "all_to_one":
        return f"every other GPU → {_memory_words(b, numa)} (fan-in){latency}"
    return f"{_memory_words(a, numa)} {arrow} {_memory_words(b, numa)}{latency}"


# --- contenders ------------------------------------------------------------------------------

@dataclass(frozen=True, order=True)
class Contender:
    """One way of doing a movement: mechanism, benchmark and every choice it was measured with."""

    mechanism: str
    benchmark: str
    choices: tuple[tuple[str, str], ...]

    @property
    def allocator(self) -> str:
        """The allocator(s) of the buffers, source first: "pinned → device", "device"."""
        c = dict(self.choices)
        names = [c[k] for k in ("from.allocator", "to.allocator") if c.get(k)]
        if len(names) == 2 and names[0] == names[1]:
            names = names[:1]
        return " → ".join(names) or "-"

    @property
    def library(self) -> str:
        """The MPI library that carried the bytes ("Open MPI 4.1.4"), "" where none did."""
        return dict(self.choices).get("mpi_library", "")

    def uses(self, allocator: str) -> bool:
        c = dict(self.choices)
        return allocator in (self.allocator, c.get("from.allocator"), c.get("to.allocator"))


def contender_of(r: Result) -> Contender:
    m = r.movement
    assert m is not None
    choices = []
    for side, e in (("from", m.source), ("to", m.target)):
        if e is not None:
            choices += [(f"{side}.allocator", e.allocator), (f"{side}.first_touch", e.first_touch)]
    choices = [(k, v) for k, v in choices if v] + list(m.choices)
    return Contender(m.mechanism, r.benchmark, tuple(choices))


def value_of(r: Result) -> float:
    """The figure that competes: bandwidth (bus bandwidth for collectives) or latency."""
    if r.metric != "bandwidth":
        return r.latency_us
    return r.collective.busbw_gbps if r.collective else r.bandwidth_gbps


def unit_of(r: Result) -> str:
    return ("GB/s busbw" if r.collective else "GB/s") if r.metric == "bandwidth" else "us"


def spread_of(r: Result) -> tuple[float, float]:
    """The p5–p95 range in the figure's own unit, low to high."""
    if r.metric == "bandwidth":
        factor = r.collective.bus_factor if r.collective else 1.0
        lo = factor * r.bytes_per_op / r.stats.p95_s / 1e9 if r.stats.p95_s > 0 else math.nan
        hi = factor * r.bytes_per_op / r.stats.p5_s / 1e9 if r.stats.p5_s > 0 else math.nan
        return lo, hi
    return r.stats.p5_s * 1e6, r.stats.p95_s * 1e6


def better(a: float, b: float, metric: str) -> bool:
    return a > b if metric == "bandwidth" else a < b


def ratio(winner: float, other: float, metric: str) -> float:
    if metric == "bandwidth":
        return winner / other if other > 0 else math.inf
    return other / winner if winner > 0 else math.inf


def peak_fraction(r: Result) -> float | None:
    """Of the movement's peak; never for a cache-resident figure (no DRAM/HBM peak applies)."""
    if r.movement and r.movement.cache_resident:
        return None
    if r.peak and math.isfinite(r.peak.fraction) and math.isfinite(r.peak.gbps) and r.peak.gbps > 0:
        return r.peak.fraction
    return None


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
        key = move_key(r, numa.keyed)
        data = table.get(key)
        if data is None:
            data = table[key] = MovementData(key, m, places_of(m, numa.keyed), numa=numa.keyed)
        data.contenders.setdefault(contender_of(r), {})[r.bytes] = r  # a repetition keeps the later record
    for data in table.values():
        data.label = movement_label(data.key, data.places, numa.named, data.operations == {"ping_pong"})
    return sorted(table.values(), key=lambda d: _row_order(d)), left_out


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


# --- cells -----------------------------------------------------------------------------------

def _choice(c: Contender, r: Result) -> dict[str, Any]:
    lo, hi = spread_of(r)
    fraction = peak_fraction(r)
    return {"mechanism": c.mechanism, "benchmark": c.benchmark, "allocator": c.allocator,
            "choices": dict(c.choices), "value": value_of(r), "unit": unit_of(r),
            "spread": [lo if math.isfinite(lo) else None, hi if math.isfinite(hi) else None],
            "peak_fraction": fraction,
            "peak_gbps": r.peak.gbps if r.peak and fraction is not None else None,
            "residency": r.movement.residency_why or None if r.movement else None,
            "point": r.point or f"line {r.line}",
            # What one operation's time covers (a ping-pong's half round trip, a copy's launch and
            # synchronisation): contenders of a latency row are timed by different methods.
            "includes": r.latency_includes or None,
            # "unstable": a later batch of the same point disagreed (results.Result.stability).
            "stability": r.stability}


def _cell(b: Bin, contenders: dict[Contender, dict[int, Result]], metric: str) -> dict[str, Any] | None:
    low = b.min_bytes
    if metric != "latency" and b.max_bytes <= FIRST_BIN_MAX:
        # A bandwidth of a few bytes is a latency in disguise: bandwidth rows keep one column up
        # to 4 KiB (the size most contenders measured), as before the smallest messages had theirs.
        if b.min_bytes == 1:
            return None
        low = 1
    sizes: dict[int, int] = {}
    for points in contenders.values():
        for size in points:
            if low <= size <= b.max_bytes:
                sizes[size] = sizes.get(size, 0) + 1
    if not sizes:
        return None
    # The smallest bin shows its smallest size; the others the size most contenders measured.
    size = min(sizes) if b.min_bytes == 1 else max(sizes, key=lambda s: (sizes[s], s))
    here = [(c, p[size]) for c, p in contenders.items() if size in p]
    here.sort(key=lambda cr: value_of(cr[1]), reverse=metric == "bandwidth")
    memory = [(c, r) for c, r in here if not (r.movement and r.movement.cache_resident)]
    best: dict[str, float] = {}
    for c, r in memory:  # sorted best first: the first of each mechanism is its best
        best.setdefault(c.mechanism, value_of(r))
    cell: dict[str, Any] = {"bin": b.label, "bytes": size, "contenders": len(here), "winner": None,
                            "runner_up": None, "margin": None, "clear": None, "cache_resident": not memory,
                            "cache_figure": None, "best_by_mechanism": best}
    if not memory:
        cell["cache_figure"] = _choice(*here[0])
        return cell
    wc, wr = memory[0]
    cell["winner"] = _choice(wc, wr)
    runner = next(((c, r) for c, r in memory[1:]
                   if (c.mechanism, c.allocator, c.library) != (wc.mechanism, wc.allocator, wc.library)), None)
    if runner:
        rc, rr = runner
        cell["runner_up"] = _choice(rc, rr)
        cell["margin"] = ratio(value_of(wr), value_of(rr), metric)
        (w_lo, w_hi), (r_lo, r_hi) = spread_of(wr), spread_of(rr)
        cell["clear"] = bool(w_lo > r_hi) if metric == "bandwidth" else bool(w_hi < r_lo)
    # A winner whose own figure did not repeat is never a clear winner: which state the machine was
    # in decided it, so no finding or crossover builds on it.
    cell["unstable"] = [c["mechanism"] for c in (cell["winner"], cell["runner_up"]) if c and c["stability"] == "unstable"]
    if cell["unstable"]:
        cell["clear"] = False
    return cell


def crossovers(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Where the winning mechanism changes between two clear cells (ties cannot cross)."""
    clear = [c for c in cells if c["winner"] and c["clear"]]
    out = []
    for a, b in zip(clear, clear[1:]):
        if a["winner"]["mechanism"] != b["winner"]["mechanism"]:
            out.append({"below": a["winner"]["mechanism"], "above": b["winner"]["mechanism"],
                        "between_bytes": [a["bytes"], b["bytes"]]})
    return out


def fastest_allocator(cells: list[dict[str, Any]], of: str = "allocator") -> str | None:
    """The allocator (or with `of="library"`, the MPI library) that wins the most cells (the
    larger sizes break a tie)."""
    wins: dict[str, tuple[int, int]] = {}
    for i, c in enumerate(cells):
        name = c["winner"] and (c["winner"]["allocator"] if of == "allocator" else c["winner"]["choices"].get("mpi_library"))
        if name:
            n, _ = wins.get(name, (0, 0))
            wins[name] = (n + 1, i)
    return max(wins, key=lambda a: wins[a]) if wins else None


def _cells(bins: list[Bin], contenders: dict[Contender, dict[int, Result]], metric: str) -> list[dict[str, Any]]:
    return [c for b in bins for c in [_cell(b, contenders, metric)] if c is not None]


def movement_answer(d: MovementData, bins: list[Bin]) -> dict[str, Any]:
    cells = _cells(bins, d.contenders, d.metric)
    by_allocator: dict[str, list[dict[str, Any]]] = {}
    allocators = sorted({c.allocator for c in d.contenders})
    if len(allocators) > 1:
        for name in allocators:
            mine = {c: p for c, p in d.contenders.items() if c.allocator == name}
            by_allocator[name] = _cells(bins, mine, d.metric)
    # MPI libraries compete as allocators do (commatlas run --mpi a,b): each one's own view.
    by_library: dict[str, list[dict[str, Any]]] = {}
    libraries = sorted({c.library for c in d.contenders} - {""})
    if len(libraries) > 1:
        for name in libraries:
            mine = {c: p for c, p in d.contenders.items() if c.library == name}
            by_library[name] = _cells(bins, mine, d.metric)
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
    from commatlas.report.findings import find_answers  # the sentences read the answers themselves

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
    answers["findings"] = find_answers(answers)
    tuning = _tuning(run)
    if tuning is not None:
        answers["tuning"] = tuning
    return answers


def _tuning(run: Run) -> Any:
    """Issue 13's per-movement --sweep-env advice, where that module is installed."""
    try:
        from commatlas.tuning import tuning_answers  # type: ignore[import-not-found]
    except ImportError:
        return None
    return tuning_answers(run)


def write_answers(run: Run, answers: dict[str, Any] | None = None, out_dir: Path | None = None) -> Path:
    answers = answers if answers is not None else compute_answers(run)
    path = (out_dir or run.directory) / ANSWERS_FILE
    write_atomically(path, json.dumps(answers, indent=1, ensure_ascii=False, allow_nan=False) + "\n")
    return path


def load_answers(path: str | Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))
