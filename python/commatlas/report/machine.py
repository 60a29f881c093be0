"""The machine a run measured, from its meta record: what makes its numbers comparable."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from commatlas.selection import short_reason
from commatlas.units import format_size, memory_peak_text, numa_nodes_text


@dataclass
class Machine:
    facts: list[tuple[str, str]] = field(default_factory=list)  # versions, host, command line
    backends: list[tuple[str, str]] = field(default_factory=list)
    environment: list[tuple[str, str]] = field(default_factory=list)
    gpus: list[dict[str, str]] = field(default_factory=list)
    # Topology matrix: row per source GPU, cell "link, peak GB/s" per destination.
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
    facts += [(f"option {k}", v) for k, v in (meta.get("options") or {}).items()]
    facts += [(f"launcher {k}", v) for k, v in (meta.get("launcher") or {}).items()]
    if rank_cpus:
        # Bound ranks name one CPU each, unbound ones the whole machine: how well a latency repeats
        # depends on it (an H100 VM's 1-byte ping-pong: 8-13% between passes bound, up to 62% unbound).
        facts.append(("CPUs each rank could run on", " | ".join(
            ", ".join(f"rank {i}: {c}" for i, c in enumerate(cpus)) for cpus in rank_cpus)))
    m.facts = [(k, _text(v)) for k, v in facts if v not in (None, "", [], {})]
    m.backends = [(name, _text(info)) for name, info in (engine.get("backends") or {}).items()]
    m.environment = [(k, _text(v)) for k, v in sorted((meta.get("environment") or {}).items())]
    _topology(m, meta.get("topology"))
    return m


def _topology(m: Machine, topo: dict[str, Any] | None) -> None:
    if not topo or not topo.get("gpus"):
        m.topology_note = short_reason((topo or {}).get("reason", "no GPU topology in this run")) \
            if isinstance(topo, dict) else "no GPU topology in this run"
        return
    for g in topo["gpus"]:
        pcie = g.get("pcie") or {}
        m.gpus.append({
            "index": _text(g.get("index")), "name": _text(g.get("name")), "pci": _text(g.get("pci_bus_id")),
            "memory": format_size(g.get("memory_bytes")) if g.get("memory_bytes") else "-",
            "sms": _text(g.get("sm_count")), "copy engines": _text(g.get("copy_engines")),
            "HBM peak": f"{g['hbm_peak_gbps']:.4g} GB/s" if g.get("hbm_peak_gbps") else "-",
            "PCIe": (f"Gen{pcie.get('gen_current')} x{pcie.get('width_current')}"
                     + (f", {pcie['peak_gbps']:.4g} GB/s" if pcie.get("peak_gbps") else "")) if pcie else "-",
            "NUMA": _text(g.get("numa_node")),
        })
    indices = [str(g.get("index")) for g in topo["gpus"]]
    cells = {(str(p.get("src")), str(p.get("dst"))): p for p in topo.get("pairs") or []}
    m.matrix_cols = indices
    for src in indices:
        row = []
        for dst in indices:
            p = cells.get((src, dst))
            if src == dst:
                gpu = next(g for g in m.gpus if g["index"] == src)
                row.append(f"local HBM {gpu['HBM peak']}")
            elif p is None:
                row.append("-")
            else:
                links = f" ×{p['nvlink_links']}" if p.get("nvlink_links") else ""
                peak = f", {p['peak_gbps']:.4g} GB/s" if p.get("peak_gbps") else ""
                access = "" if p.get("peer_access", True) else " (no peer access)"
                row.append(f"{p.get('link', '?')}{links}{peak}{access}")
        m.matrix_rows.append((src, row))
    m.topology_note = f"source: {topo.get('source', 'unknown')}"


def _text(v: Any) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k}={_text(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return ", ".join(_text(x) for x in v)
    if isinstance(v, bool):
        return "yes" if v else "no"
    # Reasons carry where the engine raised them (…/topology_cuda.cu:75): for the log, not the reader.
    return "-" if v is None else short_reason(str(v))
