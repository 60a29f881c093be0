"""The machine a run measured, from its meta record: what makes its numbers comparable."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from commatlas.report.topology import fact_text, report_tables
from commatlas.units import memory_peak_text, numa_nodes_text


@dataclass
class Machine:
    facts: list[tuple[str, str]] = field(default_factory=list)  # versions, host, command line
    backends: list[tuple[str, str]] = field(default_factory=list)
    environment: list[tuple[str, str]] = field(default_factory=list)
    gpus: list[dict[str, str]] = field(default_factory=list)
    # Topology (commatlas.report.topology): row per source GPU, cell "link, peak GB/s" per destination.
    matrix_cols: list[str] = field(default_factory=list)
    matrix_rows: list[tuple[str, list[str]]] = field(default_factory=list)
    topology_note: str = ""


def describe_machine(meta: dict[str, Any] | None, rank_cpus: list[tuple[str, ...]] | None = None) -> Machine:
    """`rank_cpus`: each launch's CPUs per rank (placement.cpus of its multi-rank points), as run."""
    m = Machine()
    if not meta:
        m.topology_note = "unknown: the results file has no meta record"
        return m
    engine = meta.get("engine") or {}
    host = engine.get("host") or {}
    facts = [
        ("commatlas", meta.get("commatlas_version")), ("run id", meta.get("run_id")),
        ("started", meta.get("start_time")), ("command line", " ".join(map(str, meta.get("command_line") or []))),
        ("engine", " ".join(str(engine.get(k)) for k in ("version", "git_sha") if engine.get(k))),
        ("compiler", engine.get("compiler")), ("hostname", host.get("hostname")), ("CPU", host.get("cpu_model")),
        ("logical CPUs", host.get("logical_cpus")),
        ("NUMA", numa_nodes_text(host.get("numa_nodes")) if "numa_nodes" in host else None),
        ("host memory peak", memory_peak_text(host.get("memory_peak")) if "memory_peak" in host else None),
    ]
    facts += [(f"host {k}", v) for k, v in host.items()
              if k not in ("hostname", "cpu_model", "logical_cpus", "numa_nodes", "memory_peak")]
    # What every engine process of the run fixed at start, so that a figure does not depend on what
    # ran before it in the job: the sentence the engine gives for each.
    facts += [(f"process state: {k.replace('_', ' ').replace('gpu', 'GPU')}", v.get("why", v) if isinstance(v, dict) else v)
              for k, v in (engine.get("process_state") or {}).items()]
    facts += [(f"option {k}", v) for k, v in (meta.get("options") or {}).items()]
    facts += [(f"launcher {k}", v) for k, v in (meta.get("launcher") or {}).items()]
    if rank_cpus:
        # Bound ranks name one CPU each, unbound ones the whole machine: how well a latency repeats
        # depends on it (an H100 VM's 1-byte ping-pong: 8-13% between passes bound, up to 62% unbound).
        facts.append(("CPUs each rank could run on", " | ".join(
            ", ".join(f"rank {i}: {c}" for i, c in enumerate(cpus)) for cpus in rank_cpus)))
    m.facts = [(k, fact_text(v)) for k, v in facts if v not in (None, "", [], {})]
    m.backends = [(name, fact_text(info)) for name, info in (engine.get("backends") or {}).items()]
    m.environment = [(k, fact_text(v)) for k, v in sorted((meta.get("environment") or {}).items())]
    m.gpus, m.matrix_cols, m.matrix_rows, m.topology_note = report_tables(meta.get("topology"))
    return m
