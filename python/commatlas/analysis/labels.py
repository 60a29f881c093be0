"""The labels of movements as people read them: "GPU 0 → GPU 1", "CPU memory, copy"."""
from __future__ import annotations

from commatlas.analysis.keys import COLLECTIVES, MoveKey, Places, place_key
from commatlas.io.results import Endpoint


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
