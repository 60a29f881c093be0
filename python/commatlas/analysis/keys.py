"""The keys of the answers: size bins, places and movement keys. Two results compete only when
their movement keys are equal (the rules are in commatlas.analysis.answers' text)."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from commatlas.io.results import Endpoint, Movement, Result, Run
from commatlas.units import format_size, format_size_range
from commatlas.io.vocabulary import COMMUNICATOR_OPERATIONS

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
