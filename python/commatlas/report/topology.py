"""The GPU topology, the one view of the engine's `topo --json` (and of a run's meta record, which
holds the same object): `commatlas topo` prints it as a matrix like `nvidia-smi topo -m`, with the
theoretical per-direction bandwidth (GB/s = 1e9 B/s) of every GPU-GPU and GPU-host path, and the
report's machine section shows it as tables (`report_tables`)."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.table import Table

from commatlas.io.engine import short_reason
from commatlas.units import format_size


def pair_cell(pair: dict[str, Any] | None) -> str:
    if pair is None:
        return "?"
    link = pair.get("link", "none")
    peak = pair.get("peak_gbps")
    rate = f" {peak:.0f}" if peak else ""
    if link == "nvlink":
        return f"NV{pair.get('nvlink_links', '?')}{rate}"
    if link == "xgmi":  # AMD Infinity Fabric; 0 links: routed through another GPU
        return f"xGMI{pair.get('xgmi_links', '?')}{rate}"
    if link == "pcie":
        return f"PCIe{rate}"
    return "none"


def host_link_gbps(topology: dict[str, Any], gpu: dict[str, Any]) -> float | None:
    """Per-GPU PCIe peak: from host_links (a list, or a list of {gpu, peak_gbps}, or a map), else
    from the GPU's own PCIe facts."""
    index = gpu.get("index")
    links = topology.get("host_links")
    if isinstance(links, dict):
        value = links.get(str(index), links.get(index))
        if isinstance(value, dict):
            return value.get("peak_gbps")
        if value is not None:
            return value
    if isinstance(links, list):
        for position, entry in enumerate(links):
            if isinstance(entry, dict) and entry.get("gpu", position) == index:
                return entry.get("peak_gbps")
            if not isinstance(entry, dict) and position == index:
                return entry
    return (gpu.get("pcie") or {}).get("peak_gbps")


def pairs_of(topology: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """Each GPU pair's facts, by (source index, destination index) as text."""
    return {(str(p.get("src")), str(p.get("dst"))): p for p in topology.get("pairs") or []}


def matrix_table(topology: dict[str, Any]) -> Table:
    gpus = topology["gpus"]
    pairs = pairs_of(topology)
    table = Table(title="GPU topology (cells: link, theoretical GB/s per direction)", title_justify="left")
    table.add_column("")
    for gpu in gpus:
        table.add_column(f"GPU{gpu['index']}", justify="center")
    for column in ("Host (PCIe)", "CPU affinity", "NUMA"):
        table.add_column(column, justify="center")
    for src in gpus:
        cells = ["X" if src["index"] == dst["index"] else pair_cell(pairs.get((str(src["index"]), str(dst["index"]))))
                 for dst in gpus]
        host = host_link_gbps(topology, src)
        cells += [f"PCIe {host:.0f}" if host else "?", str(src.get("cpu_affinity", "-")), str(src.get("numa_node", "-"))]
        table.add_row(f"GPU{src['index']}", *cells)
    return table


def gpus_table(topology: dict[str, Any]) -> Table:
    table = Table(title="GPUs", title_justify="left")
    for column in ("GPU", "name", "PCI bus", "SMs", "memory", "HBM peak", "PCIe now / max", "copy engines"):
        table.add_column(column, overflow="fold")
    for gpu in topology["gpus"]:
        pcie = gpu.get("pcie") or {}
        hbm = gpu.get("hbm_peak_gbps")
        table.add_row(
            str(gpu["index"]), str(gpu.get("name", "-")), str(gpu.get("pci_bus_id", "-")), str(gpu.get("sm_count", "-")),
            format_size(gpu.get("memory_bytes")),
            f"{hbm:.0f} GB/s ({gpu.get('memory_clock_mhz', '?')} MHz x {gpu.get('memory_bus_width_bits', '?')} bit)" if hbm else "-",
            f"Gen{pcie.get('gen_current', '?')} x{pcie.get('width_current', '?')} / Gen{pcie.get('gen_max', '?')} x{pcie.get('width_max', '?')}",
            str(gpu.get("copy_engines", "-")),
        )
    return table


def legend(topology: dict[str, Any]) -> str:
    nvml = topology.get("nvml") or {}
    source = topology.get("source", "?")
    nvml_text = f"NVML {nvml.get('version')}" if nvml.get("available") else f"NVML unavailable: {nvml.get('reason', '?')}"
    return ("NV<n> = n NVLink links, PCIe = through the PCIe hierarchy, none = no peer path. "
            f"Facts from {source} ({nvml_text}).")


def render(console: Console, topology: dict[str, Any] | None, reason_without_topo: str) -> None:
    if topology is None:
        console.print(f"no GPU: {reason_without_topo}")
        return
    if not topology.get("gpus"):
        console.print(f"no GPU: {topology.get('reason', 'none found')}")
        return
    console.print(Group(matrix_table(topology), gpus_table(topology), legend(topology)))


# --- the report's machine section ---------------------------------------------------------------

def report_tables(topo: dict[str, Any] | None) -> tuple[list[dict[str, str]], list[str], list[tuple[str, list[str]]], str]:
    """The GPUs (one dict of facts each), the matrix's columns and rows (row per source GPU, cell
    "link ×n, peak GB/s" per destination, the diagonal its local HBM), and a note: the source of
    the facts, or why there are none."""
    if not topo or not topo.get("gpus"):
        note = short_reason((topo or {}).get("reason", "no GPU topology in this run")) \
            if isinstance(topo, dict) else "no GPU topology in this run"
        return [], [], [], note
    gpus = []
    for g in topo["gpus"]:
        pcie = g.get("pcie") or {}
        gpus.append({
            "index": fact_text(g.get("index")), "name": fact_text(g.get("name")), "pci": fact_text(g.get("pci_bus_id")),
            "memory": format_size(g.get("memory_bytes")) if g.get("memory_bytes") else "-",
            "sms": fact_text(g.get("sm_count")), "copy engines": fact_text(g.get("copy_engines")),
            "HBM peak": f"{g['hbm_peak_gbps']:.4g} GB/s" if g.get("hbm_peak_gbps") else "-",
            "PCIe": (f"Gen{pcie.get('gen_current')} x{pcie.get('width_current')}"
                     + (f", {pcie['peak_gbps']:.4g} GB/s" if pcie.get("peak_gbps") else "")) if pcie else "-",
            "NUMA": fact_text(g.get("numa_node")),
        })
    indices = [str(g.get("index")) for g in topo["gpus"]]
    cells = pairs_of(topo)
    rows = []
    for src in indices:
        row = []
        for dst in indices:
            p = cells.get((src, dst))
            if src == dst:
                gpu = next(g for g in gpus if g["index"] == src)
                row.append(f"local HBM {gpu['HBM peak']}")
            elif p is None:
                row.append("-")
            else:
                links = f" ×{p['nvlink_links']}" if p.get("nvlink_links") else ""
                peak = f", {p['peak_gbps']:.4g} GB/s" if p.get("peak_gbps") else ""
                access = "" if p.get("peer_access", True) else " (no peer access)"
                row.append(f"{p.get('link', '?')}{links}{peak}{access}")
        rows.append((src, row))
    return gpus, indices, rows, f"source: {topo.get('source', 'unknown')}"


def fact_text(v: Any) -> str:
    """A fact of the machine as one line of text (the machine section's tables)."""
    if isinstance(v, dict):
        return ", ".join(f"{k}={fact_text(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return ", ".join(fact_text(x) for x in v)
    if isinstance(v, bool):
        return "yes" if v else "no"
    # Reasons carry where the engine raised them (…/topology_cuda.cu:75): for the log, not the reader.
    return "-" if v is None else short_reason(str(v))
